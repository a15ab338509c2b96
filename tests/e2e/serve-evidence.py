#!/usr/bin/env python3
"""The body of POST /v1/evidence for one case of boot-evidence.py's
evidence, quoted again over the verifier's nonce (the PCRs and the log
unchanged), as a node does after asking for a nonce.
Usage: serve-evidence.py DIR MKQUOTE CASE NODE NONCE > body.json"""
import base64
import hashlib
import json
import os
import subprocess
import sys

DIR, MKQUOTE, CASE, NODE, NONCE = sys.argv[1:6]
q = json.load(open(os.path.join(DIR, f"quote-{CASE}.json")))
pcrs = q["pcrs"]["sha256"]
quoted = sorted(int(p) for p in pcrs)
mask = sum(1 << p for p in quoted)
digest = hashlib.sha256(b"".join(bytes.fromhex(pcrs[str(p)]) for p in quoted)).hexdigest()
ak = 1 if CASE == "soft" else 0   # as boot-evidence.py signs them
out = subprocess.run([MKQUOTE, os.path.join(DIR, "ak"), "2"], input=f"{ak} {NONCE} {mask} {digest}\n",
                     capture_output=True, text=True, check=True).stdout.split()
q.update(nonce=NONCE, attest=out[0], signature=out[1])
log = open(os.path.join(DIR, f"log-{CASE}.bin"), "rb").read()
json.dump({"node": NODE, "nonce": NONCE, "quote": q, "eventlog": base64.b64encode(log).decode()}, sys.stdout)
