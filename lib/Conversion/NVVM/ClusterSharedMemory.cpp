//===- ClusterSharedMemory.cpp - A thread block cluster's shared memory --===//
#include "ClusterSharedMemory.h"

#include "InlinePtx.h"

using namespace mlir;
using namespace mlir::microscale;

void cluster::barrier(OpBuilder &b, Location loc) {
  inlinePtx(b, loc, Type(), ValueRange{},
            "barrier.cluster.arrive.release.aligned;\n"
            "barrier.cluster.wait.acquire.aligned;",
            "");
}

void cluster::storeSharedF32(OpBuilder &b, Location loc, Value address,
                             Value value) {
  inlinePtx(b, loc, Type(), ValueRange{address, value},
            "st.shared.f32 [$0], $1;", "r,f");
}

Value cluster::mapShared(OpBuilder &b, Location loc, Value address,
                         Value rank) {
  return inlinePtx(b, loc, b.getI32Type(), ValueRange{address, rank},
                   "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r")
      .getResult(0);
}

Value cluster::loadSharedF32(OpBuilder &b, Location loc, Value address) {
  return inlinePtx(b, loc, b.getF32Type(), ValueRange{address},
                   "ld.shared::cluster.f32 $0, [$1];", "=f,r")
      .getResult(0);
}
