"""Runs scripted request sequences through hishel, an RFC 9111 cache for httpx that Runway's
authors did not write, and prints what it delivered, for the differential cache tests.

Input (stdin, JSON): {"base": "http://127.0.0.1:PORT", "scenarios": [{"name": ..., "steps": [
  {"get": "/path?query", "headers": {...}, "step": "X-Step value"} | {"advance": seconds}
  | {"post": "/path"}]}]}  (a POST steers the server; it goes around the cache)
Output (stdout, JSON): {name: [{"status": …, "body": delivered body as text}, one per "get"]}

Each scenario gets a fresh private cache (hishel's shared=False) in memory, and its own clock:
`time.time` is the real time plus the scenario's advances, as Runway's cache clock is in the test.
"""
import json
import sqlite3
import sys
import time

import hishel
import httpx
from hishel.httpx import CacheClient

real_time = time.time
offset = 0.0
time.time = lambda: real_time() + offset

request = json.load(sys.stdin)
results = {}
for scenario in request["scenarios"]:
    offset = 0.0
    storage = hishel.SqliteStorage(connection=sqlite3.connect(":memory:", check_same_thread=False))
    delivered = []
    # httpx's default 5 s timeout is shorter than a busy machine may take to answer.
    with CacheClient(base_url=request["base"], storage=storage, rfc=hishel.CacheOptions(shared=False), timeout=120) as client:
        for step in scenario["steps"]:
            if "advance" in step:
                offset += step["advance"]
                continue
            if "post" in step:
                httpx.post(request["base"] + step["post"], timeout=120)
                continue
            headers = dict(step.get("headers", {}))
            headers["X-Step"] = step["step"]
            response = client.get(step["get"], headers=headers)
            delivered.append({"status": response.status_code, "body": response.text})
    results[scenario["name"]] = delivered
json.dump(results, sys.stdout)
