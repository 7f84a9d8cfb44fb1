{
  "targets": [
    {
      "target_name": "allocator",
      "sources": ["allocator.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
