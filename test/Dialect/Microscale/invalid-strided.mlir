// RUN: mx-opt %s -split-input-file -verify-diagnostics

// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{failed to parse Microscale_StridedAttr parameter 'major_dim' which is to be a `int64_t`}}
func.func private @f() attributes {test.l = #microscale.strided<major_dim = x>}

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: axis}}
func.func private @f() attributes {test.l = #microscale.strided<axis = 1>}

// -----

// A major_dim beyond the rank is caught where the layout meets a shape.
// expected-error @+1 {{value layout #microscale.strided<major_dim = 2> does not fit logical shape [64, 32]: major_dim 2 is out of range for rank 2}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, axis = 1, values = #microscale.strided<major_dim = 2>>)

// -----

// expected-error @+1 {{scale layout #microscale.strided<major_dim = -3> does not fit scale shape [64, 1]: major_dim -3 is out of range for rank 2}}
func.func private @f(!microscale.qtensor<64x32, mxfp4, axis = 1, scales = #microscale.strided<major_dim = -3>>)
