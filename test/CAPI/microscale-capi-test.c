/*===- microscale-capi-test.c - Test of the microscale C API ---------------===*/
/* Run by test/CAPI/capi.mlir, which FileChecks the CHECK lines below.   */
#include "microscale-c/Microscale.h"

#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Dialect/Func.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

static void printToStderr(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stderr);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic, void *userData) {
  (void)userData;
  fprintf(stderr, "diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStderr, NULL);
  fprintf(stderr, "\n");
  return mlirLogicalResultSuccess();
}

static void dumpAttr(const char *label, MlirAttribute attr) {
  fprintf(stderr, "%s: ", label);
  mlirAttributePrint(attr, printToStderr, NULL);
  fprintf(stderr, "\n");
}

static void dumpType(const char *label, MlirType type) {
  fprintf(stderr, "%s: ", label);
  mlirTypePrint(type, printToStderr, NULL);
  fprintf(stderr, "\n");
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  /* Attributes and types need the dialect loaded, not just registered. */
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__microscale__(), ctx);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__func__(), ctx);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirAttribute nullAttr = {NULL};

  /* Formats. */
  MlirAttribute mxfp4 = mlirMicroscaleFormatAttrGetNamed(ctx, mlirStringRefCreateFromCString("mxfp4"));
  dumpAttr("named", mxfp4);
  // CHECK: named: #microscale.format<mxfp4>
  fprintf(stderr, "is format: %d, block: %u, global: %d\n", mlirAttributeIsAMicroscaleFormat(mxfp4),
          mlirMicroscaleFormatAttrGetBlockSize(mxfp4), mlirMicroscaleFormatAttrHasGlobalScale(mxfp4));
  // CHECK: is format: 1, block: 32, global: 0
  dumpType("element", mlirMicroscaleFormatAttrGetElementType(mxfp4));
  // CHECK: element: f4E2M1FN
  MlirAttribute unknown = mlirMicroscaleFormatAttrGetNamed(ctx, mlirStringRefCreateFromCString("mxfp5"));
  fprintf(stderr, "unknown is null: %d\n", mlirAttributeIsNull(unknown));
  // CHECK: unknown is null: 1
  MlirAttribute nvfp4 = mlirMicroscaleFormatAttrGetChecked(
      loc, mlirFloat4E2M1FNTypeGet(ctx), mlirFloat8E4M3FNTypeGet(ctx), 16, true);
  MlirStringRef name = mlirMicroscaleFormatAttrGetName(nvfp4);
  fprintf(stderr, "explicit nvfp4 name: %.*s\n", (int)name.length, name.data);
  // CHECK: explicit nvfp4 name: nvfp4
  MlirAttribute bad = mlirMicroscaleFormatAttrGetChecked(
      loc, mlirF16TypeGet(ctx), mlirFloat8E8M0FNUTypeGet(ctx), 32, false);
  fprintf(stderr, "bad format is null: %d\n", mlirAttributeIsNull(bad));
  // CHECK: diagnostic: unsupported element type 'f16'
  // CHECK: bad format is null: 1

  /* Layouts. */
  MlirAttribute strided = mlirMicroscaleStridedAttrGet(ctx, -2);
  dumpAttr("strided", strided);
  // CHECK: strided: #microscale.strided<major_dim = -2>
  fprintf(stderr, "major_dim: %lld, is layout: %d\n",
          (long long)mlirMicroscaleStridedAttrGetMajorDim(strided), mlirAttributeIsAMicroscaleLayout(strided));
  // CHECK: major_dim: -2, is layout: 1
  MlirAttribute hopperValue = mlirMicroscaleHopperValueAttrGetChecked(loc, -2, 3);
  MlirAttribute hopperScale = mlirMicroscaleHopperScaleAttrGetChecked(loc, -2, 8);
  dumpAttr("hopper", hopperValue);
  // CHECK: hopper: #microscale.hopper_value<mx_axis = -2, mma_version = 3>
  MlirAttribute badHopper = mlirMicroscaleHopperValueAttrGetChecked(loc, -2, 4);
  fprintf(stderr, "bad hopper is null: %d\n", mlirAttributeIsNull(badHopper));
  // CHECK: diagnostic: mma_version must be 2 (mma.sync) or 3 (wgmma), got 4
  // CHECK: bad hopper is null: 1
  dumpAttr("others", mlirMicroscaleBlackwellShuffledValueAttrGetChecked(loc, 128, 256));
  // CHECK: others: #microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>
  fprintf(stderr, "layouts: %d %d %d\n",
          mlirAttributeIsAMicroscaleLayout(mlirMicroscaleBlackwellValueAttrGet(ctx)),
          mlirAttributeIsAMicroscaleLayout(mlirMicroscaleBlackwellScaleAttrGet(ctx)),
          mlirAttributeIsAMicroscaleLayout(mlirMicroscaleCDNA4ScaleAttrGet(ctx)));
  // CHECK: layouts: 1 1 1

  /* The quantized tensor type and its storage. */
  int64_t shape[3] = {2, 256, 512};
  MlirType weight = mlirMicroscaleQTensorTypeGetChecked(loc, 3, shape, mxfp4, 1, hopperValue, hopperScale);
  dumpType("weight", weight);
  // CHECK: weight: !microscale.qtensor<2x256x512, mxfp4, axis = 1, values = #microscale.hopper_value<mx_axis = -2, mma_version = 3>, scales = #microscale.hopper_scale<mx_axis = -2, num_warps = 8>>
  fprintf(stderr, "rank %ld dim1 %lld axis %lld\n", (long)mlirMicroscaleQTensorTypeGetRank(weight),
          (long long)mlirMicroscaleQTensorTypeGetDimSize(weight, 1),
          (long long)mlirMicroscaleQTensorTypeGetAxis(weight));
  // CHECK: rank 3 dim1 256 axis 1
  dumpType("value storage", mlirMicroscaleQTensorTypeGetValueStorageType(weight));
  // CHECK: value storage: tensor<2x128x512xi8>
  dumpType("scale storage", mlirMicroscaleQTensorTypeGetScaleStorageType(weight));
  // CHECK: scale storage: tensor<2x16x256xi8>
  MlirType defaults = mlirMicroscaleQTensorTypeGetChecked(loc, 3, shape, mxfp4, 1, nullAttr,
                                                          nullAttr);
  dumpType("defaults", defaults);
  // CHECK: defaults: !microscale.qtensor<2x256x512, mxfp4, axis = 1>
  int64_t oddShape[2] = {64, 33};
  MlirType odd = mlirMicroscaleQTensorTypeGetChecked(loc, 2, oddShape, mxfp4, 0, nullAttr,
                                                     nullAttr);
  fprintf(stderr, "odd is null: %d\n", mlirTypeIsNull(odd));
  // CHECK: diagnostic: value layout #microscale.strided does not fit logical shape [64, 33]: FP4 packing dimension -1 must have an even size, got 33
  // CHECK: odd is null: 1

  /* Run a pass through the C API. */
  MlirModule module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(
      "func.func @f() -> !microscale.qtensor<1x32, mxfp4, axis = 1> {\n"
      "  %x = arith.constant dense<3.0> : tensor<1x32xf32>\n"
      "  %q = microscale.quantize %x : tensor<1x32xf32> -> !microscale.qtensor<1x32, mxfp4, axis = 1>\n"
      "  return %q : !microscale.qtensor<1x32, mxfp4, axis = 1>\n"
      "}\n"));
  assert(!mlirModuleIsNull(module));
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirPassManagerAddOwnedPass(pm, mlirMicroscaleCreateFoldConstantsPass(0));
  MlirLogicalResult result = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  fprintf(stderr, "pass succeeded: %d\n", mlirLogicalResultIsSuccess(result));
  // CHECK: pass succeeded: 1
  mlirOperationPrint(mlirModuleGetOperation(module), printToStderr, NULL);
  /* amax 3: OCP picks 2^(1 - 2) = 0.5 (code 126), so 3 is 6 (code 7, 0x77). */
  // CHECK: arith.constant dense<119> : tensor<1x16xi8>
  // CHECK: arith.constant dense<126> : tensor<1x1xi8>
  // CHECK: microscale.from_bytes
  mlirMicroscaleRegisterPasses();
  fprintf(stderr, "\nregistered\n");
  // CHECK: registered

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
