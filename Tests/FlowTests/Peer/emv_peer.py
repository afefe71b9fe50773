"""A peer that is not ours, for the DS and 3DS Server roles: it builds its own AReq and
device data with joserfc and the cryptography package, or plays a DS for our 3DS Server.

usage:
  emv_peer.py areq URL DS_CERT_PEM RID STYLE PAN VERSION
      Sends one AReq to URL (our DS); STYLE is rsa (RSA-OAEP-256 via joserfc), android
      (alg dir + epk) or ios-ec (ECDH-ES). joserfc cannot derive the EMV key (empty
      AlgorithmID, PartyVInfo = DS id), so the EC styles use the cryptography package here.
      Prints the answer.
  ds DS_KEY_PEM RID
      Listens on a free port (printed first), takes one AReq from our 3DS Server, checks its
      fields, decrypts sdkEncData with the DS key, answers an ARes Y; prints the device data.
"""
import base64
import hashlib
import http.server
import json
import sys
import urllib.request
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwe
from joserfc.jwk import RSAKey


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def emv_kdf(z, rid):
    """Concat KDF, one SHA-256 round: empty AlgorithmID and PartyUInfo, PartyVInfo = DS id."""
    apv = rid.encode()
    other = (0).to_bytes(4, "big") + (0).to_bytes(4, "big") + len(apv).to_bytes(4, "big") + apv + (256).to_bytes(4, "big")
    return hashlib.sha256((1).to_bytes(4, "big") + z + other).digest()


def ec_jwk(public_key):
    numbers = public_key.public_numbers()
    return {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}


def device_data(cert_pem, rid, style):
    plaintext = json.dumps({"DV": "1.0", "DD": {"C001": "PythonPeer"}, "DPNA": {}, "SW": []}).encode()
    certificate = x509.load_pem_x509_certificate(cert_pem)
    if style == "rsa":
        key = RSAKey.import_key(certificate.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        return jwe.encrypt_compact({"alg": "RSA-OAEP-256", "enc": "A128CBC-HS256"}, plaintext, key,
                                   algorithms=["RSA-OAEP-256", "A128CBC-HS256"])
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    key = emv_kdf(ephemeral.exchange(ec.ECDH(), certificate.public_key()), rid)
    header = {"alg": "dir" if style == "android" else "ECDH-ES", "enc": "A128CBC-HS256", "epk": ec_jwk(ephemeral.public_key())}
    return jwe_dir(header, plaintext, key)


def jwe_dir(header, plaintext, key):
    """JWE compact with a caller-derived key, as SDKs build it (joserfc's own ECDH-ES derives another key)."""
    import os
    from cryptography.hazmat.primitives import hashes, hmac, padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    protected = b64url(json.dumps(header, separators=(",", ":")).encode())
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(key[16:]), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padder.update(plaintext) + padder.finalize()) + encryptor.finalize()
    aad = protected.encode()
    mac = hmac.HMAC(key[:16], hashes.SHA256())
    mac.update(aad + iv + ciphertext + (len(aad) * 8).to_bytes(8, "big"))
    return ".".join([protected, "", b64url(iv), b64url(ciphertext), b64url(mac.finalize()[:16])])


def jwe_open(token, key):
    """Opens an A128CBC-HS256 JWE with a caller-derived key, checking the tag first."""
    from cryptography.hazmat.primitives import hashes, hmac, padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    protected, _, iv, ciphertext, tag = token.split(".")
    iv, ciphertext, tag = unb64url(iv), unb64url(ciphertext), unb64url(tag)
    aad = protected.encode()
    mac = hmac.HMAC(key[:16], hashes.SHA256())
    mac.update(aad + iv + ciphertext + (len(aad) * 8).to_bytes(8, "big"))
    if mac.finalize()[:16] != tag:
        raise ValueError("authentication tag mismatch")
    decryptor = Cipher(algorithms.AES(key[16:]), modes.CBC(iv)).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    return unpadder.update(decryptor.update(ciphertext) + decryptor.finalize()) + unpadder.finalize()


def send_areq(url, cert_path, rid, style, pan, version):
    sdk_key = ec.generate_private_key(ec.SECP256R1())
    areq = {
        "messageType": "AReq", "messageVersion": version, "messageCategory": "01", "deviceChannel": "01",
        "threeDSServerTransID": str(uuid.uuid4()), "threeDSServerRefNumber": "PYTHON_PEER_3DSS",
        "threeDSServerURL": "https://peer.example/rreq", "threeDSRequestorID": "py-requestor",
        "threeDSRequestorName": "Python Peer", "threeDSRequestorURL": "https://peer.example",
        "threeDSRequestorAuthenticationInd": "01", "acctNumber": pan, "cardExpiryDate": "3012",
        "acquirerBIN": "400551", "acquirerMerchantID": "py-merchant", "mcc": "5411", "merchantCountryCode": "840",
        "merchantName": "Python Peer", "purchaseAmount": "500", "purchaseCurrency": "840", "purchaseExponent": "2",
        "purchaseDate": "20261121120000", "sdkAppID": str(uuid.uuid4()), "sdkTransID": str(uuid.uuid4()),
        "sdkReferenceNumber": "PYTHON_PEER_SDK", "sdkMaxTimeout": "05",
        "sdkEphemPubKey": ec_jwk(sdk_key.public_key()),
        "deviceRenderOptions": {"sdkInterface": "03", "sdkUiType": ["01"]},
        "sdkEncData": device_data(open(cert_path, "rb").read(), rid, style),
    }
    if version == "2.3.1":
        # Required from 2.3.1 (Core specification 2.3.1.1, Annex A): the acquirer's country, and the SDK type.
        areq.update({"acquirerCountryCode": "840", "acquirerCountryCodeSource": "01", "sdkType": "01",
                     "defaultSdkType": {"sdkVariant": "01"}})
    request = urllib.request.Request(url, data=json.dumps(areq).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.loads(response.read())
    # What a 3DS Server checks of an ARes: the ids it sent come back.
    for field in ("threeDSServerTransID", "sdkTransID"):
        if answer.get(field) != areq[field]:
            print(f"ARes does not echo {field}", file=sys.stderr)
            sys.exit(1)
    print(json.dumps(answer))


REQUIRED = ["messageType", "messageVersion", "messageCategory", "deviceChannel", "threeDSServerTransID",
            "threeDSServerRefNumber", "threeDSServerURL", "threeDSRequestorID", "threeDSRequestorName",
            "threeDSRequestorURL", "acctNumber", "sdkAppID", "sdkTransID", "sdkReferenceNumber", "sdkEphemPubKey",
            "sdkEncData", "sdkMaxTimeout", "deviceRenderOptions", "purchaseAmount", "purchaseCurrency", "purchaseDate"]


def serve_ds(key_path, rid):
    key_pem = open(key_path, "rb").read()
    private_key = serialization.load_pem_private_key(key_pem, None)
    result = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            areq = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            missing = [field for field in REQUIRED if field not in areq]
            token = areq.get("sdkEncData", "")
            header = json.loads(unb64url(token.split(".")[0]))
            if header["alg"] == "RSA-OAEP-256":
                plaintext = jwe.decrypt_compact(token, RSAKey.import_key(key_pem), algorithms=["RSA-OAEP-256", header["enc"]]).plaintext
            else:
                epk = ec.EllipticCurvePublicNumbers(int.from_bytes(unb64url(header["epk"]["x"]), "big"),
                                                    int.from_bytes(unb64url(header["epk"]["y"]), "big"), ec.SECP256R1()).public_key()
                key = emv_kdf(private_key.exchange(ec.ECDH(), epk), rid)
                # joserfc knows only the standard header of "dir": decrypt with the EMV-derived key under alg dir.
                plaintext = jwe_open(token, key)
            ares = {"messageType": "ARes", "messageVersion": areq["messageVersion"],
                    "threeDSServerTransID": areq["threeDSServerTransID"], "acsTransID": str(uuid.uuid4()),
                    "dsTransID": str(uuid.uuid4()), "sdkTransID": areq["sdkTransID"], "acsReferenceNumber": "PY_ACS",
                    "dsReferenceNumber": "PY_DS", "transStatus": "Y", "eci": "05",
                    "authenticationValue": base64.b64encode(b"\x01" * 20).decode()}
            body = json.dumps(ares).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            result.update(missing=missing, alg=header["alg"], deviceData=json.loads(plaintext))

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.timeout = 20
    server.handle_request()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "areq":
        send_areq(*sys.argv[2:8])
    elif sys.argv[1] == "ds":
        serve_ds(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
