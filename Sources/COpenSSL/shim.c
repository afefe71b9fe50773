// COpenSSL is header-only (static inline wrappers in include/COpenSSL.h);
// SwiftPM wants one source file per C target.
#include "COpenSSL.h"
