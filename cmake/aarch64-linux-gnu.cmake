# Cross-building kperf for arm64 Linux with Debian's cross toolchain (crossbuild-essential-arm64)
# against an arm64 Debian root that holds the -dev packages (scripts/check-arm64.sh makes one):
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DKPERF_SYSROOT=/path/to/arm64-root
# Built programs (gtest's test discovery runs them) go through qemu-aarch64 with that root.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# GCC notes that std::pair arguments changed ABI in GCC 10.1; every part is built with GCC 12.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")

set(KPERF_SYSROOT "$ENV{KPERF_SYSROOT}" CACHE PATH "arm64 Debian root with kperf's -dev packages")
# CMake's compiler checks re-read this file in their own projects: pass the root on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES KPERF_SYSROOT)
if(NOT KPERF_SYSROOT OR NOT EXISTS "${KPERF_SYSROOT}/usr/include")
  message(FATAL_ERROR "KPERF_SYSROOT must name an arm64 Debian root (scripts/check-arm64.sh)")
endif()
set(CMAKE_SYSROOT "${KPERF_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${KPERF_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L "${KPERF_SYSROOT}")
