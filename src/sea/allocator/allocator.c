/*
 * The single executable's allocator settings (src/sea/allocator.ts): tune(arenaMax, mmapThreshold)
 * sets glibc's M_ARENA_MAX and M_MMAP_THRESHOLD with mallopt(3) and returns whether both took.
 * Elsewhere than glibc it changes nothing and returns false. Built by build.mjs for the embedded
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

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_value trim_fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &trim_fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", trim_fn) != napi_ok) return NULL;
  if (napi_create_function(env, "tune", NAPI_AUTO_LENGTH, tune, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "tune", fn) != napi_ok) return NULL;
  return exports;
}
