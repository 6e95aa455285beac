# Sourced by the device scripts (markidis_gpu_run.sh, markidis_speed_run.sh, ozaki_gpu_run.sh):
# the lent GPU machines have no internet, so GoogleTest, Google Benchmark, MPFR and Eigen come
# from Debian packages extracted under $DEPS/usr (default .deps/root). Where that folder exists
# this puts its libraries on LD_LIBRARY_PATH and sets PREFIX to the CMake argument that finds
# them; elsewhere PREFIX is empty and CMake finds the system's.
DEPS=${DEPS:-$PWD/.deps/root}
if [ -d "$DEPS/usr" ]; then
  export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  PREFIX=(-DCMAKE_PREFIX_PATH="$DEPS/usr")
else
  PREFIX=()
fi
