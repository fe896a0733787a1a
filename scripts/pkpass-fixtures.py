#!/usr/bin/env python3
"""Writes the wallet passes (.pkpass) the tests read into a folder (scripts/pass-web-service.py makes its own
with archive() and pass_json()): a boarding pass signed by a throwaway
authority (openssl; its certificate as authority.pem), the same unsigned, one whose signature is of another pass, one altered after it was issued, a ZIP bomb, a ZIP of 10,000 files, a
file that is no ZIP, and a pass without a barcode. pass.json follows Apple's PassKit package format."""

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

BARCODE = "M1DESMARAIS/LUC       EAB12C3 YULFRAAC 0834 326J003A0027 100"


def pass_json(gate="B12", barcodes=True, boarding="2027-11-22T22:45:00Z", web_service=None):
    document = {
        "formatVersion": 1,
        "passTypeIdentifier": "pass.org.example.boarding",
        "serialNumber": "AB12C3-0834",
        "teamIdentifier": "A1B2C3D4E5",
        "organizationName": "Example Air",
        "description": "Boarding pass",
        "relevantDate": "2027-11-22T17:45-05:00",
        "boardingPass": {
            "transitType": "PKTransitTypeAir",
            "headerFields": [{"key": "gate", "label": "GATE", "value": gate}],
            "primaryFields": [
                {"key": "origin", "label": "Montréal", "value": "YUL"},
                {"key": "destination", "label": "Frankfurt", "value": "FRA"},
            ],
            "auxiliaryFields": [
                {"key": "boardingTime", "label": "BOARDING", "value": "2027-11-22T17:50-05:00"},
                {"key": "seat", "label": "SEAT", "value": "3A"},
                {"key": "sequence", "label": "SEQ", "value": 27},
            ],
        },
        "semantics": {"departureTerminal": "1", "currentBoardingDate": boarding},
    }
    if web_service:
        document["webServiceURL"], document["authenticationToken"] = web_service
    if barcodes:
        document["barcodes"] = [
            {"message": BARCODE, "format": "PKBarcodeFormatPDF417", "messageEncoding": "iso-8859-1"}
        ]
    return json.dumps(document).encode()


def archive(path, files, signature=None, manifest=None):
    """Writes a pass to `path`, a file name or a file object."""
    manifest = manifest or {name: hashlib.sha1(data).hexdigest() for name, data in files.items()}
    manifest_bytes = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("manifest.json", manifest_bytes)
        if signature is not None:
            zf.writestr("signature", signature(manifest_bytes))


_AUTHORITY = []


def authority():
    """A throwaway certificate authority standing in for Apple's (made once per run): its key and certificate."""
    if not _AUTHORITY:
        folder = tempfile.mkdtemp()
        key, cert = os.path.join(folder, "ca.key"), os.path.join(folder, "ca.pem")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/O=Example/CN=Example Root CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-keyout", key, "-out", cert, "-days", "2"], check=True, capture_output=True)
        _AUTHORITY.extend([key, cert])
    return _AUTHORITY


def sign(manifest_bytes):
    """A detached PKCS #7 signature of the manifest with signed attributes, as Apple's signpass makes, by a Pass
    Type ID certificate the throwaway authority issued."""
    ca_key, ca_cert = authority()
    with tempfile.TemporaryDirectory() as folder:
        key, request, cert, manifest, signature = (os.path.join(folder, n) for n in ("k", "r", "c", "m", "s"))
        with open(manifest, "wb") as f:
            f.write(manifest_bytes)
        subprocess.run(
            ["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj",
             "/UID=pass.org.example/CN=Pass Type ID: pass.org.example", "-keyout", key, "-out", request],
            check=True, capture_output=True)
        with open(os.path.join(folder, "ext"), "w") as f:
            f.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n")
        subprocess.run(
            ["openssl", "x509", "-req", "-in", request, "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
             "-extfile", os.path.join(folder, "ext"), "-out", cert, "-days", "1"], check=True, capture_output=True)
        subprocess.run(
            ["openssl", "smime", "-sign", "-binary", "-md", "sha256", "-outform", "DER", "-signer", cert,
             "-inkey", key, "-in", manifest, "-out", signature], check=True, capture_output=True)
        with open(signature, "rb") as f:
            return f.read()


def main(folder):
    icon = b"\x89PNG\r\n\x1a\n" + bytes(64)
    files = {"pass.json": pass_json(), "icon.png": icon}
    archive(os.path.join(folder, "signed.pkpass"), files, signature=sign)
    # The authority the tests trust in Apple's stead.
    with open(authority()[1], "rb") as source, open(os.path.join(folder, "authority.pem"), "wb") as target:
        target.write(source.read())
    # Whole and consistent, but its signature is of another manifest (one with gate B12): forged.
    other = {"pass.json": pass_json(gate="C3"), "icon.png": icon}
    archive(os.path.join(folder, "forged.pkpass"), other,
            signature=lambda _: sign(json.dumps({n: hashlib.sha1(d).hexdigest() for n, d in files.items()}).encode()))
    archive(os.path.join(folder, "unsigned.pkpass"), files)
    # Issued with gate B12; the gate changed to A1 afterwards, the manifest left as it was.
    issued = {name: hashlib.sha1(data).hexdigest() for name, data in files.items()}
    archive(os.path.join(folder, "altered.pkpass"), {"pass.json": pass_json(gate="A1"), "icon.png": icon},
            manifest=issued)
    # 64 MiB of spaces that deflate to about 64 KiB.
    bomb = b" " * (64 << 20)
    archive(os.path.join(folder, "bomb.pkpass"), {"pass.json": bomb})
    with zipfile.ZipFile(os.path.join(folder, "many.pkpass"), "w", zipfile.ZIP_STORED) as zf:
        for index in range(10_000):
            zf.writestr(f"f{index}.txt", b"")
    with open(os.path.join(folder, "garbage.pkpass"), "wb") as f:
        f.write(b"PK\x03\x04 not really a zip" + bytes(100))
    archive(os.path.join(folder, "no-barcode.pkpass"), {"pass.json": pass_json(barcodes=False), "icon.png": icon})


if __name__ == "__main__":
    main(sys.argv[1])
