// The dialect reference in docs/ is generated from ODS; this fails when it
// is stale. Regenerate with `ninja -C build microscale-doc`.
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscaleDialect.md %microscale_src_root/docs/Dialect/Microscale.md
// RUN: diff %microscale_obj_root/include/microscale/Dialect/Microscale/IR/MicroscaleLayoutInterface.md %microscale_src_root/docs/Dialect/LayoutAttrInterface.md
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscalePasses.md %microscale_src_root/docs/Dialect/Passes.md
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscaleGPUPasses.md %microscale_src_root/docs/Dialect/GPUPasses.md
// RUN: diff %microscale_obj_root/docs/Microscale/MicroscaleAMDGPUPasses.md %microscale_src_root/docs/Dialect/AMDGPUPasses.md
