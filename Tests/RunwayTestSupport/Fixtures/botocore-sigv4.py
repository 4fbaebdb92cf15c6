# Signs the requests of AWSSignatureV4Tests.generateCases with botocore's SigV4 signer.
#
# stdin: the cases as JSON (method, url, headers, body as hex, style, service, region, access,
# secret, payload = the body's SHA-256); stdout: the Authorization value of each, as JSON.
# The test pipes its cases through this script when botocore is installed, and with
# RUNWAY_WRITE_BOTOCORE_FIXTURE=1 writes the result to botocore-sigv4-expected.json beside it,
# which is what machines without botocore compare against.
import sys, json, datetime
from unittest import mock
import botocore.auth as auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

cases = json.load(sys.stdin)
fixed = datetime.datetime(2015, 8, 30, 12, 36, 0)
out = []
with mock.patch.object(auth, "get_current_datetime", return_value=fixed):
    for c in cases:
        cls = auth.S3SigV4Auth if c["style"] == "s3" else auth.SigV4Auth
        signer = cls(Credentials(c["access"], c["secret"]), c["service"], c["region"])
        headers = dict(c["headers"])
        if c["style"] == "standard":
            headers["X-Amz-Content-SHA256"] = c["payload"]
        request = AWSRequest(method=c["method"], url=c["url"], data=bytes.fromhex(c["body"]), headers=headers)
        signer.add_auth(request)
        out.append(request.headers["Authorization"])
print(json.dumps(out))
