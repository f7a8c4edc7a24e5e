#ifndef HEALTHETL_CCURL_SHIM_H
#define HEALTHETL_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per kind of argument HealthETL passes.
static inline CURLcode healthetl_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }
static inline CURLcode healthetl_curl_set_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}
static inline CURLcode healthetl_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
  return curl_easy_setopt(handle, option, value);
}
static inline CURLcode healthetl_curl_set_string(CURL *handle, CURLoption option, const char *value) {
  return curl_easy_setopt(handle, option, value);
}
static inline CURLcode healthetl_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
  return curl_easy_setopt(handle, option, value);
}
static inline CURLcode healthetl_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
  return curl_easy_setopt(handle, option, value);
}
typedef size_t (*healthetl_curl_write_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode healthetl_curl_set_callback(
    CURL *handle, CURLoption option, healthetl_curl_write_callback value) {
  return curl_easy_setopt(handle, option, value);
}
static inline CURLcode healthetl_curl_response_code(CURL *handle, long *code) {
  return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}
static inline CURLcode healthetl_curl_connect_code(CURL *handle, long *code) {
  return curl_easy_getinfo(handle, CURLINFO_HTTP_CONNECTCODE, code);
}
#endif
