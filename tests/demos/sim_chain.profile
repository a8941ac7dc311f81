{
 "format": "weft-profile",
 "version": 1,
 "function": "synthetic: cholesky_mpi_sim's exact-answer test (tests/demos/CMakeLists.txt)",
 "classes": [
  {"name": "TilePotrf", "time_ns": 100000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "TilePotrfInv", "time_ns": 300000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "TileTrmm", "time_ns": 300000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "TileSyrk", "time_ns": 400000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "Gemm", "time_ns": 999000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "DeepCopyOp", "time_ns": 150000, "percent": 0, "calls": 3, "applies": 3},
  {"name": "MpiSend", "time_ns": 60000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "MpiRecv", "time_ns": 5000, "percent": 0, "calls": 1, "applies": 1}
 ],
 "rewrites": []
}
