// RUN: mx-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown microscaling format 'mxfp5'; expected one of mxfp4, mxfp6_e2m3, mxfp6_e3m2, mxfp8_e4m3, mxfp8_e5m2, nvfp4, nvfp4_b32}}
func.func private @f() attributes {test.f = #microscale.format<mxfp5>}

// -----

// expected-error @+1 {{unsupported element type 'f16': expected f4E2M1FN, f6E2M3FN, f6E3M2FN, f8E4M3FN or f8E5M2}}
func.func private @f() attributes {test.f = #microscale.format<f16, f8E8M0FNU, block = 32>}

// -----

// expected-error @+1 {{unsupported element type 'f8E8M0FNU'}}
func.func private @f() attributes {test.f = #microscale.format<f8E8M0FNU, f8E8M0FNU, block = 32>}

// -----

// expected-error @+1 {{unsupported scale type 'f8E5M2': expected f8E8M0FNU or f8E4M3FN}}
func.func private @f() attributes {test.f = #microscale.format<f4E2M1FN, f8E5M2, block = 32>}

// -----

// expected-error @+1 {{block size must be a power of two in [2, 1024], got 24}}
func.func private @f() attributes {test.f = #microscale.format<f4E2M1FN, f8E8M0FNU, block = 24>}

// -----

// expected-error @+1 {{block size must be a power of two in [2, 1024], got 2048}}
func.func private @f() attributes {test.f = #microscale.format<f4E2M1FN, f8E8M0FNU, block = 2048>}

// -----

// expected-error @+1 {{a global scale requires f8E4M3FN block scales, got 'f8E8M0FNU'}}
func.func private @f() attributes {test.f = #microscale.format<f4E2M1FN, f8E8M0FNU, block = 32, global_scale>}

// -----

// expected-error @+1 {{expected 'global_scale'}}
func.func private @f() attributes {test.f = #microscale.format<f4E2M1FN, f8E4M3FN, block = 16, global>}

// -----

// expected-error @+1 {{expected 'block'}}
func.func private @f() attributes {test.f = #microscale.format<f4E2M1FN, f8E4M3FN, 16>}
