// COpenSSL is header-only (static inline wrappers in include/COpenSSL.h) but for what needs
// OpenSSL's deprecated interfaces, kept here so that the suppression stays in this file.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "COpenSSL.h"
#include <openssl/ecdh.h>
#include <pthread.h>

static EC_GROUP *p256;
static void make_p256(void) { p256 = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1); }

/* `point` decoded on `group`: NULL when it is not an uncompressed point on the curve. Decoding sets the affine
   coordinates, which OpenSSL 3 refuses for a point off the curve; an uncompressed encoding cannot be the point at
   infinity. */
static EC_POINT *decode(const EC_GROUP *group, const unsigned char *point, size_t length) {
    if (length != 65 || point[0] != 0x04) return NULL;
    EC_POINT *decoded = EC_POINT_new(group);
    if (decoded != NULL && EC_POINT_oct2point(group, decoded, point, length, NULL) != 1) {
        EC_POINT_free(decoded);
        decoded = NULL;
    }
    return decoded;
}

int shim_ecdh_p256(EVP_PKEY *key, const unsigned char *point, size_t length, unsigned char *secret) {
    // The key's legacy EC_KEY: made on the first call and kept by the EVP_PKEY (under its lock), a reference after.
    EC_KEY *ec = EVP_PKEY_get1_EC_KEY(key);
    if (ec == NULL) return -1;
    const EC_GROUP *group = EC_KEY_get0_group(ec);
    int result = -1;
    if (group != NULL && EC_GROUP_get_curve_name(group) == NID_X9_62_prime256v1) {
        EC_POINT *peer = decode(group, point, length);
        if (peer == NULL) {
            result = 0;
        } else {
            if (ECDH_compute_key(secret, 32, peer, ec, NULL) == 32) result = 1;
            EC_POINT_free(peer);
        }
    }
    EC_KEY_free(ec);
    return result;
}

int shim_ecdh_p256_ephemeral(const unsigned char *point, size_t length, unsigned char *secret, unsigned char *public_point) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_p256);
    if (p256 == NULL) return -1;
    // The peer first: a point off the curve costs no key.
    EC_POINT *peer = decode(p256, point, length);
    if (peer == NULL) return 0;
    int result = -1;
    EC_KEY *key = EC_KEY_new();
    if (key != NULL && EC_KEY_set_group(key, p256) == 1 && EC_KEY_generate_key(key) == 1
        && ECDH_compute_key(secret, 32, peer, key, NULL) == 32
        && EC_POINT_point2oct(p256, EC_KEY_get0_public_key(key), POINT_CONVERSION_UNCOMPRESSED, public_point, 65, NULL) == 65) {
        result = 1;
    }
    EC_KEY_free(key);  // clears the private key
    EC_POINT_free(peer);
    return result;
}
