package keeper

import "runtime"

const isLinux = runtime.GOOS == "linux"
