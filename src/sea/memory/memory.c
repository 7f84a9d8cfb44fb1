/*
 * The single executable's memory addon (src/sea/memory.ts), a few calls the JavaScript runtime does
 * not offer:
 * - tune(arenaMax, mmapThreshold) sets glibc's M_ARENA_MAX and M_MMAP_THRESHOLD with mallopt(3) and
 *   returns whether both took;
 * - trim() hands the arenas' free pages back with malloc_trim(3) and returns whether any went;
 * - releaseExecutable() returns a promise of the bytes of the executable's own read-only mappings
 *   it advised with madvise(MADV_PAGEOUT), on a thread of the pool, never on the event loop.
 * Elsewhere than glibc the first two change nothing and return false; elsewhere than Linux the third
 * advises nothing and resolves to 0. Built by build.mjs for the embedded Node and loaded from the
 * executable like the other addons (src/sea/natives.ts).
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#endif

static napi_value tune(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t arena_max = 0;
  int32_t mmap_threshold = 0;
  bool ok = false;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc == 2 &&
      napi_get_value_int32(env, argv[0], &arena_max) == napi_ok &&
      napi_get_value_int32(env, argv[1], &mmap_threshold) == napi_ok && arena_max > 0 && mmap_threshold > 0) {
#ifdef __GLIBC__
    ok = mallopt(M_ARENA_MAX, arena_max) == 1;
    ok = mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && ok;
#endif
  }
  napi_value result;
  napi_get_boolean(env, ok, &result);
  return result;
}

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#ifdef __GLIBC__
  released = malloc_trim(0) == 1;
#endif
  napi_value result;
  napi_get_boolean(env, released, &result);
  return result;
}

#if defined(__linux__) && defined(MADV_PAGEOUT)
/* One line of /proc/self/maps: its range, whether it may be written, and the file as "dev inode". */
typedef struct {
  unsigned long start, end;
  bool writable;
  char file[48];
} mapping;

/* Reads the next whole line into *m; a line longer than the buffer (a long path) is skipped whole. */
static bool next_mapping(FILE *maps, mapping *m) {
  char line[512];
  while (fgets(line, sizeof line, maps) != NULL) {
    bool whole = strchr(line, '\n') != NULL;
    char perms[8], dev[16];
    unsigned long inode;
    bool parsed = sscanf(line, "%lx-%lx %7s %*s %15s %lu", &m->start, &m->end, perms, dev, &inode) == 5;
    while (!whole && fgets(line, sizeof line, maps) != NULL) whole = strchr(line, '\n') != NULL;
    if (!parsed) continue;
    m->writable = perms[1] == 'w';
    snprintf(m->file, sizeof m->file, inode == 0 ? "" : "%s %lu", dev, inode);
    return true;
  }
  return false;
}

/*
 * Start-up reads much of the executable (Node's code, ICU's data, the embedded script and assets)
 * and those pages stay resident, though serving touches a fraction of them. MADV_PAGEOUT hands back
 * those only this process maps; what serving needs is read in again when touched. The file is the
 * one whose mapping holds a function of Node's own, matched by the device and inode the same maps
 * name (the path may differ from /proc/self/exe's under overlay file systems). Writable mappings
 * (data, relocations) are left alone. Returns the bytes advised.
 */
static double page_out_executable(void) {
  FILE *maps = fopen("/proc/self/maps", "re");
  if (maps == NULL) return 0;
  unsigned long node_code = (unsigned long)&napi_create_function;
  char file[48] = ""; /* stays empty if that code is not mapped from a file (Node's --use-largepages) */
  mapping m;
  while (next_mapping(maps, &m)) {
    if (m.start > node_code || node_code >= m.end) continue;
    snprintf(file, sizeof file, "%s", m.file);
    break;
  }
  double advised = 0;
  rewind(maps);
  while (file[0] != '\0' && next_mapping(maps, &m)) {
    if (m.writable || strcmp(m.file, file) != 0) continue;
    if (madvise((void *)m.start, m.end - m.start, MADV_PAGEOUT) != 0) break; /* EINVAL before Linux 5.4 */
    advised += (double)(m.end - m.start);
  }
  fclose(maps);
  return advised;
}
#else
static double page_out_executable(void) { return 0; }
#endif

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  double advised;
} release_job;

static void release_execute(napi_env env, void *data) {
  (void)env;
  ((release_job *)data)->advised = page_out_executable();
}

static void release_complete(napi_env env, napi_status status, void *data) {
  release_job *job = data;
  napi_value advised;
  napi_create_double(env, status == napi_ok ? job->advised : 0, &advised);
  napi_resolve_deferred(env, job->deferred, advised);
  napi_delete_async_work(env, job->work);
  free(job);
}

static napi_value release_executable(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value promise, name;
  release_job *job = calloc(1, sizeof *job);
  if (job == NULL || napi_create_promise(env, &job->deferred, &promise) != napi_ok) {
    free(job);
    return NULL;
  }
  napi_create_string_utf8(env, "releaseExecutable", NAPI_AUTO_LENGTH, &name);
  bool created = napi_create_async_work(env, NULL, name, release_execute, release_complete, job, &job->work) == napi_ok;
  if (!created || napi_queue_async_work(env, job->work) != napi_ok) {
    if (created) napi_delete_async_work(env, job->work);
    napi_value zero;
    napi_create_double(env, 0, &zero);
    napi_resolve_deferred(env, job->deferred, zero);
    free(job);
  }
  return promise;
}

static bool export_function(napi_env env, napi_value exports, const char *name, napi_callback fn) {
  napi_value value;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &value) == napi_ok &&
         napi_set_named_property(env, exports, name, value) == napi_ok;
}

NAPI_MODULE_INIT() {
  if (!export_function(env, exports, "tune", tune) || !export_function(env, exports, "trim", trim) ||
      !export_function(env, exports, "releaseExecutable", release_executable)) {
    return NULL;
  }
  return exports;
}
