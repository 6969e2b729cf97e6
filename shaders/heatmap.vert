// heatmap.vert: a quad covering the whole target (4 vertices as a triangle strip, no buffers).
// v_uv is (0, 0) at the heatmap's top-left cell (row 0, column 0) and (1, 1) at its
// bottom-right, so rows go down the screen as in a printed matrix.
#version 330 core
out vec2 v_uv;

void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));  // (0,0) (1,0) (0,1) (1,1)
  v_uv = vec2(corner.x, 1.0 - corner.y);
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
