#ifndef COPENSSL_H
#define COPENSSL_H
// OpenSSL 3 headers, and static inline wrappers for the APIs OpenSSL only offers
// as macros (which do not import into Swift).
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/rsa.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>

static inline int shim_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int shim_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
static inline int shim_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_groups_list(ctx, list);
}
static inline int shim_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
static inline long shim_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline long shim_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long shim_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}
static inline int shim_BIO_pending(BIO *bio) {
    return (int)BIO_pending(bio);
}
static inline void shim_OPENSSL_free(void *ptr) {
    OPENSSL_free(ptr);
}
static inline int shim_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return (int)SSL_CTX_add_extra_chain_cert(ctx, cert);
}
static inline STACK_OF(X509) *shim_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int shim_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
static inline void shim_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
static inline void shim_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
static inline int shim_BIO_reset(BIO *bio) { return (int)BIO_reset(bio); }
static inline uint64_t shim_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
static inline uint64_t shim_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }

/* Key generation: EVP_RSA_gen / EVP_EC_gen are variadic macros. */
static inline EVP_PKEY *shim_EVP_RSA_gen(unsigned int bits) { return EVP_RSA_gen(bits); }
static inline EVP_PKEY *shim_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }
/* X509V3_set_ctx_nodb is a macro. */
static inline void shim_X509V3_set_ctx_nodb(X509V3_CTX *ctx) { X509V3_set_ctx_nodb(ctx); }
static inline int shim_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *shim_sk_X509_value(const STACK_OF(X509) *stack, int i) { return sk_X509_value(stack, i); }
/* OSSL_PARAM construction helpers for EVP_PKEY_fromdata. */
static inline int shim_OSSL_PARAM_BLD_push_utf8_string(OSSL_PARAM_BLD *bld, const char *key, const char *value) {
    return OSSL_PARAM_BLD_push_utf8_string(bld, key, value, 0);
}
static inline int shim_EVP_PKEY_KEYPAIR(void) { return EVP_PKEY_KEYPAIR; }
static inline int shim_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int shim_MBSTRING_UTF8(void) { return MBSTRING_UTF8; }
static inline unsigned long shim_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }

/* The oldest error on this thread's OpenSSL queue in words, or NULL if there is none; the
   queue is emptied. The text lives in a thread-local buffer until the next call. */
static inline const char *shim_take_error_string(void) {
    static __thread char text[256];
    unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0) return NULL;
    ERR_error_string_n(code, text, sizeof text);
    return text;
}
/* P-256 ECDH of `key` (a private P-256 key) with a peer's uncompressed point (04 || x || y): Z, the x coordinate
   of d·Q, in `secret` (32 bytes). OpenSSL's EC_KEY interface (deprecated in 3.0, kept; see shim.c): for a key that
   makes many agreements, as the DS's does, it costs two thirds of EVP_PKEY_derive with the peer imported as an
   EVP_PKEY. 1: done; 0: `point` is not an uncompressed point on P-256; -1: another failure. */
int shim_ecdh_p256(EVP_PKEY *key, const unsigned char *point, size_t length, unsigned char *secret);

/* A P-256 key made for one agreement with a peer's uncompressed point, then let go: Z in `secret` (32 bytes), the
   key's own uncompressed point in `public_point` (65 bytes). On the EC_KEY interface too: a key made there and used
   once costs about half of EVP_EC_gen, an imported peer and EVP_PKEY_derive. 1, 0, -1 as above. */
int shim_ecdh_p256_ephemeral(const unsigned char *point, size_t length, unsigned char *secret, unsigned char *public_point);
#endif
