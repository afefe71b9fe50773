#include <uv.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <malloc.h>  /* mallinfo2: heap in use, for /admin/memory */
