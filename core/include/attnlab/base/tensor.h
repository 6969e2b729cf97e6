// tensor.h: the matrix types every stage of the engine is stored in (float32 and float64).
//
// Legend: B batch, H heads, T tokens, d_in input width, d_out projection width, dh = d_out / H
// (the head size, d_k). A stage of rank 3 or 4 is a list of row-major matrices: B x T x d is
// B matrices of T x d; B x H x T x T is B*H matrices of T x T, index b * H + h. Row-major
// because that is how the data meets a texture, a JSON file or PyTorch's flat order.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace attnlab {

/// A float32 matrix in row-major storage (PyTorch's flat order).
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// A float32 row vector.
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;

/// A stack of equally shaped matrices: B x rows x cols, or (B*H) x T x T for per-head stages.
using MatrixStack = std::vector<Matrix>;

/// A float64 matrix in row-major storage (the tensor's flat order).
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// A float64 row vector.
using RowVectorD = Eigen::Matrix<double, 1, Eigen::Dynamic, Eigen::RowMajor>;
/// B x rows x cols, or (B*H) x T x T, as MatrixStack.
using MatrixStackD = std::vector<MatrixD>;

/// Copies `n = rows * cols` floats in row-major order into a Matrix.
/// Precondition: values.size() == rows * cols.
Matrix MatrixFromFlat(const std::vector<float>& values, Eigen::Index rows, Eigen::Index cols);

}  // namespace attnlab
