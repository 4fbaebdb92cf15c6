"""Runs schemathesis (a contract fuzzer Runway's authors did not write) against a running
`runway serve --demo`, driven by Runway's OpenAPI document: every documented operation, cases
generated from the schemas (valid ones, then invalid ones), each request signed as Runway's
`HMACSigner` signs — a second implementation of the canonical request, in Python — and the
collector's batches gzip-compressed as clients send them. Every answer must be documented: no
5xx, a documented status, content type, headers and body schema.

Usage: python3 schemathesis-serve.py SPEC BASE_URL KEY_ID SECRET_HEX EXAMPLES SEED
Prints one JSON line: cases and answers by operation and status, and the failures (at most 20).
"""
import gzip
import hashlib
import hmac
import json
import sys
import time
import uuid
from collections import Counter
from urllib.parse import urlsplit

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

spec, base_url, key_id, secret_hex, examples, seed = sys.argv[1:7]
secret = bytes.fromhex(secret_hex)
UNRESERVED = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def reencode(component):
    """A query name or value percent-decoded to bytes and re-encoded; a literal + kept."""
    raw = component.encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(raw):
        byte = raw[i]
        if byte == ord("%") and i + 2 < len(raw):
            byte = int(raw[i + 1:i + 3], 16)
            i += 2
        elif byte == ord("+"):
            out.append(byte)
            i += 1
            continue
        if byte in UNRESERVED:
            out.append(byte)
        else:
            out += b"%%%02X" % byte
        i += 1
    return out.decode("ascii")


def canonical_query(query):
    pairs = []
    for pair in query.split("&"):
        if not pair:
            continue
        name, _, value = pair.partition("=")
        pairs.append((reencode(name), reencode(value)))
    order = sorted(range(len(pairs)), key=lambda i: (pairs[i][0].encode(), i))
    return "&".join(f"{pairs[i][0]}={pairs[i][1]}" for i in order)


def sign(prepared):
    """Adds Runway's signature fields to a prepared request, as HMACSigner does."""
    url = urlsplit(prepared.url)
    body = prepared.body or b""
    if isinstance(body, str):
        body = body.encode("utf-8")
    body_hash = hashlib.sha256(body).hexdigest()
    timestamp = str(int(time.time()))
    nonce = str(uuid.uuid4())
    content_type = prepared.headers.get("Content-Type", "").strip()
    authority = url.netloc.lower()
    lines = [
        "RUNWAY-HMAC-SHA256-2", prepared.method, url.scheme, authority, url.path or "/",
        canonical_query(url.query), "content-type", f"content-type:{content_type}",
        body_hash, timestamp, nonce, key_id,
    ]
    signature = hmac.new(secret, "\n".join(lines).encode("utf-8"), hashlib.sha256).hexdigest()
    prepared.headers.update({
        "X-Runway-Key-Id": key_id, "X-Runway-Timestamp": timestamp, "X-Runway-Nonce": nonce,
        "X-Runway-Content-Sha256": body_hash, "X-Runway-Signed-Headers": "content-type",
        "X-Runway-Signature": signature,
    })


schema = schemathesis.openapi.from_path(spec)
checks = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]
session = requests.Session()
answers = Counter()
failures = []
cases = 0

for result in schema.get_all_operations():
    operation = result.ok()
    label = f"{operation.method.upper()} {operation.path}"
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        strategy = operation.as_strategy(generation_mode=mode)

        @settings(max_examples=int(examples), derandomize=True, database=None, deadline=None,
                  phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(case=strategy)
        def run(case):
            global cases
            cases += 1
            kwargs = case.as_transport_kwargs(base_url=base_url)
            prepared = session.prepare_request(requests.Request(
                method=kwargs["method"], url=kwargs["url"], headers=kwargs.get("headers"),
                params=kwargs.get("params"), json=kwargs.get("json"), data=kwargs.get("data"),
                cookies=kwargs.get("cookies")))
            if operation.path == "/oplog/batches" and prepared.body is not None:
                body = prepared.body if isinstance(prepared.body, bytes) else prepared.body.encode("utf-8")
                prepared.body = gzip.compress(body)
                prepared.headers["Content-Encoding"] = "gzip"
                prepared.headers["Content-Length"] = str(len(prepared.body))
            if operation.path.startswith("/oplog/") or operation.path.startswith("/signed/"):
                sign(prepared)
            response = session.send(prepared, timeout=30)
            answers[f"{label} {response.status_code}"] += 1
            try:
                case.validate_response(response, checks=checks)
            except Exception as failure:  # a check's failure: recorded, the run goes on
                if len(failures) < 20:
                    failures.append({"operation": label, "status": response.status_code,
                                     "failure": str(failure)[:800], "body": response.text[:300]})

        try:
            run()
        except Unsatisfiable:
            pass  # nothing of the operation can be made invalid (no parameters, no body)

print(json.dumps({"cases": cases, "answers": dict(sorted(answers.items())), "failures": failures}))
