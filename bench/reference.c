/* Reference server for the HTTP benchmark: libuv + http_parser (+ OpenSSL memory BIOs),
 * one loop per thread on a SO_REUSEPORT port, answering the bytes the harness answers for
 * GET /health and POST /admin/echo (the body is echoed without JSON parsing).
 * usage: reference PORT LOOPS [CERT KEY]   (with CERT and KEY it speaks TLS) */
#include <http_parser.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

static SSL_CTX *tls_context;
static int port;
static http_parser_settings settings;

typedef struct {
    uv_tcp_t tcp;
    http_parser parser;
    SSL *ssl;
    BIO *in, *out;
    char url[256];
    size_t url_len;
    char *body;
    size_t body_len, body_cap;
    char *pending;   /* responses built during one read, flushed together */
    size_t pending_len, pending_cap;
} conn_t;

static void append(conn_t *c, const char *data, size_t len) {
    if (c->pending_len + len > c->pending_cap) {
        c->pending_cap = (c->pending_len + len) * 2;
        c->pending = realloc(c->pending, c->pending_cap);
    }
    memcpy(c->pending + c->pending_len, data, len);
    c->pending_len += len;
}

static void write_raw(conn_t *c, const char *data, size_t len) {
    uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &buf, 1);
    if (n == (int)len) return;
    size_t off = n > 0 ? (size_t)n : 0;
    uv_write_t *req = malloc(sizeof(*req) + len - off);
    char *copy = (char *)(req + 1);
    memcpy(copy, data + off, len - off);
    buf = uv_buf_init(copy, (unsigned)(len - off));
    uv_write(req, (uv_stream_t *)&c->tcp, &buf, 1, (uv_write_cb)free);
}

static void flush(conn_t *c) {
    if (!c->pending_len) return;
    if (c->ssl) {
        SSL_write(c->ssl, c->pending, (int)c->pending_len);
    } else {
        write_raw(c, c->pending, c->pending_len);
    }
    c->pending_len = 0;
}

static void flush_tls(conn_t *c) {
    char *data;
    long len = BIO_get_mem_data(c->out, &data);
    if (len > 0) {
        write_raw(c, data, (size_t)len);
        BIO_reset(c->out);
    }
}

static void on_close(uv_handle_t *h) {
    conn_t *c = (conn_t *)h;
    if (c->ssl) SSL_free(c->ssl);
    free(c->body);
    free(c->pending);
    free(c);
}

static int on_begin(http_parser *p) {
    conn_t *c = p->data;
    c->url_len = 0;
    c->body_len = 0;
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t len) {
    conn_t *c = p->data;
    if (c->url_len + len < sizeof(c->url)) {
        memcpy(c->url + c->url_len, at, len);
        c->url_len += len;
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len) {
    conn_t *c = p->data;
    if (c->body_len + len > c->body_cap) {
        c->body_cap = (c->body_len + len) * 2;
        c->body = realloc(c->body, c->body_cap);
    }
    memcpy(c->body + c->body_len, at, len);
    c->body_len += len;
    return 0;
}

static const char *http_date(void) {
    static __thread char buf[40];
    static __thread time_t last;
    time_t now = time(NULL);
    if (now != last) {
        struct tm parts;
        gmtime_r(&now, &parts);
        strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &parts);
        last = now;
    }
    return buf;
}

static int on_complete(http_parser *p) {
    conn_t *c = p->data;
    char head[256];
    const char *body = "{\"status\":\"ok\",\"version\":\"0.9.0\"}";  /* the harness's /health body, byte for byte */
    size_t body_len = strlen(body);
    const char *status = "200 OK";
    if (c->url_len == 11 && memcmp(c->url, "/admin/echo", 11) == 0) {
        body = c->body;
        body_len = c->body_len;
    } else if (!(c->url_len == 7 && memcmp(c->url, "/health", 7) == 0)) {
        status = "404 Not Found";
        body = "{\"error\":\"no route\"}";
        body_len = strlen(body);
    }
    int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nDate: %s\r\n\r\n",
                     status, body_len, http_date());
    append(c, head, (size_t)n);
    append(c, body, body_len);
    return 0;
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
    static __thread char slab[65536];
    (void)h; (void)size;
    *buf = uv_buf_init(slab, sizeof slab);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
    conn_t *c = (conn_t *)s;
    if (n < 0) { uv_close((uv_handle_t *)s, on_close); return; }
    if (!c->ssl) {
        if (http_parser_execute(&c->parser, &settings, buf->base, (size_t)n) != (size_t)n) {
            uv_close((uv_handle_t *)s, on_close);
            return;
        }
        flush(c);
        return;
    }
    BIO_write(c->in, buf->base, (int)n);
    char plain[16384];
    for (;;) {
        int r = SSL_read(c->ssl, plain, sizeof plain);
        if (r > 0) {
            if (http_parser_execute(&c->parser, &settings, plain, (size_t)r) != (size_t)r) {
                uv_close((uv_handle_t *)s, on_close);
                return;
            }
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            flush_tls(c);
            uv_close((uv_handle_t *)s, on_close);
            return;
        }
        break;
    }
    flush(c);
    flush_tls(c);
}

static void on_connection(uv_stream_t *server, int status) {
    if (status < 0) return;
    conn_t *c = calloc(1, sizeof *c);
    uv_tcp_init(server->loop, &c->tcp);
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) { uv_close((uv_handle_t *)&c->tcp, on_close); return; }
    uv_tcp_nodelay(&c->tcp, 1);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    if (tls_context) {
        c->ssl = SSL_new(tls_context);
        c->in = BIO_new(BIO_s_mem());
        c->out = BIO_new(BIO_s_mem());
        SSL_set_bio(c->ssl, c->in, c->out);
        SSL_set_accept_state(c->ssl);
    }
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static void *run_loop(void *arg) {
    (void)arg;
    uv_loop_t loop;
    uv_loop_init(&loop);
    uv_tcp_t server;
    uv_tcp_init_ex(&loop, &server, AF_INET);
    uv_os_fd_t fd;
    uv_fileno((uv_handle_t *)&server, &fd);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in addr;
    uv_ip4_addr("127.0.0.1", port, &addr);
    if (uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0) || uv_listen((uv_stream_t *)&server, 1024, on_connection)) {
        fprintf(stderr, "cannot listen on %d\n", port);
        exit(1);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: reference PORT LOOPS [CERT KEY]\n"); return 2; }
    port = atoi(argv[1]);
    int loops = atoi(argv[2]);
    if (argc >= 5) {
        tls_context = SSL_CTX_new(TLS_server_method());
        SSL_CTX_set_min_proto_version(tls_context, TLS1_2_VERSION);
        SSL_CTX_set_cipher_list(tls_context, "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256");
        SSL_CTX_set1_groups_list(tls_context, "P-256:P-384");
        if (SSL_CTX_use_certificate_chain_file(tls_context, argv[3]) != 1 ||
            SSL_CTX_use_PrivateKey_file(tls_context, argv[4], SSL_FILETYPE_PEM) != 1) {
            ERR_print_errors_fp(stderr);
            return 1;
        }
    }
    settings.on_message_begin = on_begin;
    settings.on_url = on_url;
    settings.on_body = on_body;
    settings.on_message_complete = on_complete;
    pthread_t threads[64];
    for (int i = 0; i < loops && i < 64; i++) pthread_create(&threads[i], NULL, run_loop, NULL);
    for (int i = 0; i < loops && i < 64; i++) pthread_join(threads[i], NULL);
    return 0;
}
