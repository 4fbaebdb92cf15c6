"""Reads a HAR file with haralyzer (a reader Runway did not write) and prints what the tests check.

Usage: python3 read-har.py FILE. Prints JSON: the page count, and per entry its method, URL,
status, request headers, `time` and the sum of its non-negative phases.
"""
import json
import sys

from haralyzer import HarPage, HarParser

parser = HarParser.from_file(sys.argv[1])
page = HarPage(parser.pages[0].page_id, har_parser=parser)
entries = []
for entry in page.entries:
    timings = entry.timings
    phases = sum(timings[key] for key in ("blocked", "dns", "connect", "send", "wait", "receive") if timings[key] >= 0)
    entries.append({
        "method": entry.request.method,
        "url": entry.request.url,
        "status": entry.response.status,
        "requestHeaders": {h["name"].lower(): h["value"] for h in entry.request.headers},
        "time": entry.time,
        "phases": phases,
        "started": entry.startTime.isoformat(),
        "hasContent": bool(entry.response.raw_entry["content"].get("text")),
    })
print(json.dumps({"pages": len(parser.pages), "entries": entries}))
