{
  "targets": [
    {
      "target_name": "memory",
      "sources": ["memory.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
