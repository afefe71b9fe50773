// COpenSSL is header-only (static inline wrappers in include/COpenSSL.h) but for what needs
// OpenSSL's deprecated interfaces, kept here so that the suppression stays in this file.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "COpenSSL.h"
#include <openssl/ecdh.h>

int shim_ecdh_p256(EVP_PKEY *key, const unsigned char *point, size_t length, unsigned char *secret) {
    if (length != 65 || point[0] != 0x04) return 0;
    // The key's legacy EC_KEY: made on the first call and kept by the EVP_PKEY (under its lock), a reference after.
    EC_KEY *ec = EVP_PKEY_get1_EC_KEY(key);
    if (ec == NULL) return -1;
    const EC_GROUP *group = EC_KEY_get0_group(ec);
    int result = -1;
    EC_POINT *peer = group == NULL ? NULL : EC_POINT_new(group);
    if (peer != NULL) {
        // Decoding sets the affine coordinates, which OpenSSL 3 refuses for a point off the curve; an uncompressed
        // encoding cannot be the point at infinity.
        if (EC_GROUP_get_curve_name(group) != NID_X9_62_prime256v1 || EC_POINT_oct2point(group, peer, point, length, NULL) != 1) {
            result = 0;
        } else {
            result = ECDH_compute_key(secret, 32, peer, ec, NULL) == 32 ? 1 : -1;
        }
        EC_POINT_free(peer);
    }
    EC_KEY_free(ec);
    return result;
}
