// Every byte vector made by Triton's own layout code passes through
// mx-convert exactly, in both directions (canonical -> layout -> canonical).
// REQUIRES: triton-vectors
// RUN: %S/check-triton-vector.sh HOPPER_VALUE_mma_version2_mx_axis-1_2x64x128 2x64x128xf4E2M1FN '#microscale.hopper_value<mx_axis = -1, mma_version = 2>' %triton_vectors %t
// RUN: %S/check-triton-vector.sh HOPPER_VALUE_mma_version2_mx_axis-2_2x64x128 2x64x128xf4E2M1FN '#microscale.hopper_value<mx_axis = -2, mma_version = 2>' %triton_vectors %t
// RUN: %S/check-triton-vector.sh HOPPER_VALUE_mma_version3_mx_axis-1_2x64x128 2x64x128xf4E2M1FN '#microscale.hopper_value<mx_axis = -1, mma_version = 3>' %triton_vectors %t
// RUN: %S/check-triton-vector.sh HOPPER_VALUE_mma_version3_mx_axis-2_2x64x128 2x64x128xf4E2M1FN '#microscale.hopper_value<mx_axis = -2, mma_version = 3>' %triton_vectors %t
// RUN: %S/check-triton-vector.sh HOPPER_SCALE_mx_axis-2_num_warps8_2x64x128 2x64x128xf8E8M0FNU '#microscale.hopper_scale<mx_axis = -2, num_warps = 8>' %triton_vectors %t
// RUN: %S/check-triton-vector.sh HOPPER_SCALE_mx_axis-1_num_warps8_2x64x128 2x64x128xf8E8M0FNU '#microscale.hopper_scale<mx_axis = -1, num_warps = 8>' %triton_vectors %t
// RUN: %S/check-triton-vector.sh BLACKWELL_MX_VALUE__2x64x128 2x64x128xf4E2M1FN '#microscale.blackwell_value' %triton_vectors %t
// RUN: %S/check-triton-vector.sh BLACKWELL_MX4_VALUE_SHUFFLED_block_k128_block_n256_2x64x128 2x64x128xf4E2M1FN '#microscale.blackwell_shuffled_value<block_k = 128, block_n = 256>' %triton_vectors %t
// RUN: %S/check-triton-vector.sh BLACKWELL_SCALE__2x64x128 2x64x128xf8E8M0FNU '#microscale.blackwell_scale' %triton_vectors %t
// RUN: %S/check-triton-vector.sh CDNA4_SCALE__2x64x128 2x64x128xf8E8M0FNU '#microscale.cdna4_scale' %triton_vectors %t
// RUN: test $(grep -c '"in_file"' %triton_vectors/manifest.json) -eq 10
