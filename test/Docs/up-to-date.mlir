// The dialect reference in docs/ is generated from ODS; this fails when it
// is stale. Regenerate with `ninja -C build microscale-doc`.
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscaleDialect.md %microscale_src_root/docs/Dialect/Microscale.md
// RUN: diff %microscale_obj_root/include/microscale/Dialect/Microscale/IR/MicroscaleLayoutInterface.md %microscale_src_root/docs/Dialect/LayoutAttrInterface.md
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscalePasses.md %microscale_src_root/docs/Dialect/Passes.md
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscaleNVVMPasses.md %microscale_src_root/docs/Dialect/NVVMPasses.md
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscaleROCDLPasses.md %microscale_src_root/docs/Dialect/ROCDLPasses.md
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscaleCPUPasses.md %microscale_src_root/docs/Dialect/CPUPasses.md
