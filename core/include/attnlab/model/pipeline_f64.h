// pipeline_f64.h: the pipeline in float64, for scenarios with "dtype": "float64".
//
// Legend as pipeline.h: B batch, H heads, T tokens, d_in, d_out, dh = d_out / H, d_v (the width
// of V and the context), dh_v = d_v / H. Every stage has the shape it has in Stages, in double.
// There is no second engine: Engine (pipeline.h) runs the same stage rules as templates over
// the number type, in double only, and recomputes as incrementally as in float32; it keeps the
// double values in Stages::f64 (StageTensors<double>) and the float fields hold them rounded to
// float32 (the window and the figures read those), so that what is drawn is the float64
// result. The numerics that differ from a float32 run are the Numerics policies of
// NumericsOf<double> (pipeline.h).
//
// What float64 means, per generator:
//   - torch: every tensor is torch.float64 (torch.randn(..., dtype=torch.float64), nn.Linear and
//     nn.Embedding with dtype=torch.float64). PyTorch 1.13 draws float64 normals differently
//     from float32 ones: below 16 elements the same double Box-Muller with its cached sine half
//     (normal_distribution<double>), from 16 on normal_fill's generic blocks of 16 from 53-bit
//     uniforms, with libm log, cos and sin in double (there is no AVX2 float64 kernel).
//     torch.rand and uniform_ draw 53-bit uniforms (one 64-bit word per element), the AVX2 build
//     fusing x * width + low as for float32. Dropout keeps with U53 < 1 - p and scales by
//     1 / (1 - p) in double.
//   - numpy: NumPy's float64 draws as they are (np.random.randn, np.random.rand), no rounding;
//     the products (X @ W, q @ k.T, weights @ v) summed as np.matmul sums them with Debian's
//     reference BLAS: each element left to right over the inner index, so the scores and their
//     variance are NumPy's to the last bit.
// Numbers written in the scenario (matrix input, Q/K/V given, W matrices) are read as the
// double of their text (WrittenAsDouble, pipeline.h) as the scenario file and the generated
// program write it (the shortest float32 text: "0.43" is the double 0.43, not float32(0.43) widened), which is what
// torch.tensor(..., dtype=torch.float64) and np.array(...) make of the program's literals.
// Checked against real PyTorch and NumPy in tests/golden/f64 (tools/make_qkv_goldens.py): the
// draws bit for bit, the arithmetic to float64 rounding (torch's summation orders differ; the
// NumPy notebook's np.matmul(q, k.T) is matched exactly, tests/notebook_test.cpp).
#pragma once

#include "attnlab/model/pipeline.h"
