/*
 * The single executable's memory addon (src/sea/memory.ts), two calls the JavaScript runtime does
 * not offer:
 * - tune(arenaMax, mmapThreshold) sets glibc's M_ARENA_MAX and M_MMAP_THRESHOLD with mallopt(3) and
 *   returns whether both took;
 * - trim() hands the arenas' free pages back with malloc_trim(3) and returns whether any went.
 * Elsewhere than glibc both change nothing and return false. Built by build.mjs for the embedded
 * Node and loaded from the executable like the other addons (src/sea/natives.ts).
 */
#include <node_api.h>
#include <stdbool.h>
#ifdef __GLIBC__
#include <malloc.h>
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

static bool export_function(napi_env env, napi_value exports, const char *name, napi_callback fn) {
  napi_value value;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &value) == napi_ok &&
         napi_set_named_property(env, exports, name, value) == napi_ok;
}

NAPI_MODULE_INIT() {
  if (!export_function(env, exports, "tune", tune) || !export_function(env, exports, "trim", trim)) return NULL;
  return exports;
}
