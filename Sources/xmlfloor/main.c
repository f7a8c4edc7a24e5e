/* The benchmark floor: a libxml2 SAX2 push parse of a file that does nothing per element,
   with the same chunk size and options as HealthETL's reader. No libxml2-based parser can be
   faster on the same file; `make bench` reports HealthETL's throughput as a ratio to this. */
#include <fcntl.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static unsigned long elements = 0;

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                     int nb_namespaces, const xmlChar **namespaces, int nb_attributes, int nb_defaulted,
                     const xmlChar **attributes) {
  (void)ctx; (void)localname; (void)prefix; (void)uri; (void)nb_namespaces; (void)namespaces;
  (void)nb_attributes; (void)nb_defaulted; (void)attributes;
  elements++;
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {
  (void)ctx; (void)localname; (void)prefix; (void)uri;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: xmlfloor FILE.xml\n");
    return 64;
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    perror(argv[1]);
    return 66;
  }
  xmlSAXHandler sax = {0};
  sax.initialized = XML_SAX2_MAGIC;
  sax.startElementNs = on_start;
  sax.endElementNs = on_end;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, argv[1]);
  xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOENT);
  static char buffer[256 * 1024];
  long long total = 0;
  ssize_t n;
  int status = 0;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) {
    total += n;
    if ((status = xmlParseChunk(ctxt, buffer, (int)n, 0)) != 0) break;
  }
  if (status == 0) status = xmlParseChunk(ctxt, NULL, 0, 1);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  xmlFreeParserCtxt(ctxt);
  close(fd);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf("{\"bytes\": %lld, \"elements\": %lu, \"seconds\": %.3f, \"mbPerSecond\": %.1f, \"peakMemoryMB\": %.1f, "
         "\"status\": %d}\n",
         total, elements, seconds, (double)total / 1e6 / seconds, usage.ru_maxrss / 1024.0, status);
  return status == 0 ? 0 : 65;
}
