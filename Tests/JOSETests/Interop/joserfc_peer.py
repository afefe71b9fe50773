"""The other side of the JOSE interoperability tests: joserfc (PyPI) encrypts, decrypts,
signs and verifies what the Swift JOSE module produces and consumes.

usage: joserfc_peer.py COMMAND JWK_JSON [ARGS]
  encrypt JWK ALG ENC PLAINTEXT [APU APV]   -> compact JWE
  decrypt JWK ALG ENC COMPACT              -> plaintext
  sign    JWK ALG PAYLOAD                  -> compact JWS
  verify  JWK ALG COMPACT                  -> payload (exit 1 if the signature fails)
  verify-rfc JWK ALGS COMPACT              -> payload, or exit 1 with why the JWS is refused: ALGS comma-separated, a
                                              header parameter no one defines ignored as RFC 7515 §4 says (joserfc's
                                              default refuses one), headers of kilobytes taken (an x5c)
  import-jwk JWK                           -> the key's type and curve, or exit 1 with why the JWK is refused (read by its
                                              own kty, as a JOSE library reads a key it is sent)
  oct     KEY_B64URL ...                   (JWK given as raw octets for alg "dir")
"""
import json
import sys

from joserfc import jwe, jws
from joserfc.jws import JWSRegistry
from joserfc.jwk import ECKey, JWKRegistry, OctKey, RSAKey


def key_from(text):
    data = json.loads(text)
    if data["kty"] == "RSA":
        return RSAKey.import_key(data)
    if data["kty"] == "EC":
        return ECKey.import_key(data)
    return OctKey.import_key(data)


def main(argv):
    if argv[1] == "import-jwk":
        try:
            key = JWKRegistry.import_key(json.loads(argv[2]))
        except Exception as error:  # the refusal is the answer
            sys.exit(type(error).__name__ + ": " + str(error))
        print(key.key_type, getattr(key, "curve_name", ""))
        return
    command, key = argv[1], key_from(argv[2])
    if command == "encrypt":
        alg, enc, plaintext = argv[3], argv[4], argv[5]
        header = {"alg": alg, "enc": enc}
        if len(argv) > 7:
            header["apu"], header["apv"] = argv[6], argv[7]
        print(jwe.encrypt_compact(header, plaintext.encode(), key, algorithms=[alg, enc]))
    elif command == "decrypt":
        alg, enc, compact = argv[3], argv[4], argv[5]
        print(jwe.decrypt_compact(compact, key, algorithms=[alg, enc]).plaintext.decode())
    elif command == "sign":
        alg, payload = argv[3], argv[4]
        print(jws.serialize_compact({"alg": alg}, payload.encode(), key, algorithms=[alg]))
    elif command == "verify":
        alg, compact = argv[3], argv[4]
        print(jws.deserialize_compact(compact, key, algorithms=[alg]).payload.decode())
    elif command == "verify-rfc":
        algorithms, compact = argv[3].split(","), argv[4]
        registry = JWSRegistry(strict_check_header=False)
        # An x5c of a leaf and its root is kilobytes: joserfc's default refuses a header over 512 bytes.
        registry.max_header_length = 16384
        try:
            print(jws.deserialize_compact(compact, key, algorithms=algorithms, registry=registry).payload.decode())
        except Exception as error:  # the refusal is the answer
            sys.exit(type(error).__name__ + ": " + str(error))
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main(sys.argv)
