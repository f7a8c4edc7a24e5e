#ifndef HEALTHETL_CCRYPTO_SHIM_H
#define HEALTHETL_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#endif
