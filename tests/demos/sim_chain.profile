{
 "format": "weft-profile",
 "version": 1,
 "function": "synthetic: cholesky_mpi_sim's exact-answer test (tests/demos/CMakeLists.txt)",
 "classes": [
  {"name": "TilePotrf", "time_ns": 100000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "TilePotrfInv", "time_ns": 600000, "percent": 0, "calls": 2, "applies": 2},
  {"name": "TileTrmm", "time_ns": 900000, "percent": 0, "calls": 3, "applies": 3},
  {"name": "TileSyrk", "time_ns": 1200000, "percent": 0, "calls": 3, "applies": 3},
  {"name": "Gemm", "time_ns": 999000, "percent": 0, "calls": 1, "applies": 1},
  {"name": "MpiSend", "time_ns": 240000, "percent": 0, "calls": 4, "applies": 4},
  {"name": "MpiRecv", "time_ns": 20000, "percent": 0, "calls": 4, "applies": 4}
 ],
 "rewrites": []
}
