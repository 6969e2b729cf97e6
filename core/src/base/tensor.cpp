// tensor.cpp: see tensor.h.
#include "attnlab/base/tensor.h"

namespace attnlab {

Matrix MatrixFromFlat(const std::vector<float>& values, Eigen::Index rows, Eigen::Index cols) {
  return Eigen::Map<const Matrix>(values.data(), rows, cols);
}

}  // namespace attnlab
