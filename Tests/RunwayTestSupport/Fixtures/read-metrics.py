"""Parses Prometheus' text exposition format with prometheus_client's parser (a reader Runway
did not write) and prints every sample as JSON: name, labels, value, and the family's type.

Usage: python3 read-metrics.py < exposition
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        samples.append({"family": family.name, "type": family.type, "name": sample.name,
                        "labels": sample.labels, "value": sample.value})
print(json.dumps(samples))
