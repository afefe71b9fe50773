// COpenSSL is header-only (static inline wrappers in include/COpenSSL.h) but for what needs
// OpenSSL's deprecated interfaces, kept here so that the suppression stays in this file.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "COpenSSL.h"
#include <openssl/ecdh.h>
#include <pthread.h>

static EC_GROUP *p256;
static void make_p256(void) { p256 = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1); }

/* Z of `key` with `point`: 1, 0 for a point that is not an uncompressed point on P-256, -1 for another failure.
   Decoding sets the affine coordinates, which OpenSSL 3 refuses for a point off the curve; an uncompressed encoding
   cannot be the point at infinity. */
static int agree(const EC_KEY *key, const unsigned char *point, size_t length, unsigned char *secret) {
    const EC_GROUP *group = EC_KEY_get0_group(key);
    if (length != 65 || point[0] != 0x04 || group == NULL || EC_GROUP_get_curve_name(group) != NID_X9_62_prime256v1) return 0;
    EC_POINT *peer = EC_POINT_new(group);
    if (peer == NULL) return -1;
    int result = EC_POINT_oct2point(group, peer, point, length, NULL) != 1 ? 0 : ECDH_compute_key(secret, 32, peer, key, NULL) == 32 ? 1 : -1;
    EC_POINT_free(peer);
    return result;
}

int shim_ecdh_p256(EVP_PKEY *key, const unsigned char *point, size_t length, unsigned char *secret) {
    // The key's legacy EC_KEY: made on the first call and kept by the EVP_PKEY (under its lock), a reference after.
    EC_KEY *ec = EVP_PKEY_get1_EC_KEY(key);
    if (ec == NULL) return -1;
    int result = agree(ec, point, length, secret);
    EC_KEY_free(ec);
    return result;
}

int shim_ecdh_p256_ephemeral(const unsigned char *point, size_t length, unsigned char *secret, unsigned char *public_point) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_p256);
    EC_KEY *key = p256 == NULL ? NULL : EC_KEY_new();
    if (key == NULL) return -1;
    int result = -1;
    if (EC_KEY_set_group(key, p256) == 1 && EC_KEY_generate_key(key) == 1) {
        result = agree(key, point, length, secret);
        if (result == 1 && EC_POINT_point2oct(p256, EC_KEY_get0_public_key(key), POINT_CONVERSION_UNCOMPRESSED, public_point, 65, NULL) != 65) {
            result = -1;
        }
    }
    EC_KEY_free(key);  // clears the private key
    return result;
}
