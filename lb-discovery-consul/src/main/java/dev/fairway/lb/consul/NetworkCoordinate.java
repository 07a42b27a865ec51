package dev.fairway.lb.consul;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * One node's Vivaldi network coordinate as Consul reports it ({@code Coord}: {@code Vec}, {@code Error},
 * {@code Adjustment}, {@code Height}; every value in seconds), and the distance between two of them,
 * computed as Serf's {@code coordinate.DistanceTo} does: the Euclidean distance of the vectors plus both
 * heights, then plus both adjustments if that sum stays above zero.
 *
 * <p>Immutable and thread-safe; the vector is copied in and never handed out.
 */
final class NetworkCoordinate {
  private final double[] vec;
  private final double error;
  private final double adjustment;
  private final double height;

  NetworkCoordinate(double[] vec, double error, double adjustment, double height) {
    this.vec = vec.clone();
    this.error = error;
    this.adjustment = adjustment;
    this.height = height;
  }

  /** The outcome of reading one {@code Coord}: a coordinate, or why there is none. */
  record Parsed(@Nullable NetworkCoordinate coordinate, @Nullable String problem, String detail) {
    static Parsed bad(String problem, String detail) {
      return new Parsed(null, problem, detail);
    }
  }

  /**
   * Reads a {@code Coord} object. {@code null} or absent is {@code coordinate_missing} (an agent with
   * {@code disable_coordinates}, or a node that has not sent one yet); anything else that is not an
   * object with a non-empty numeric {@code Vec} and finite numeric {@code Error}, {@code Adjustment}
   * and {@code Height}, the height not negative, is {@code coordinate_malformed}. Never throws.
   */
  static Parsed parse(JsonNode coord) {
    if (coord.isMissingNode() || coord.isNull()) {
      return Parsed.bad("coordinate_missing", "no Coord");
    }
    JsonNode v = coord.path("Vec");
    if (!coord.isObject() || !v.isArray() || v.isEmpty()) {
      return Parsed.bad("coordinate_malformed", "Coord.Vec is not a non-empty array: " + brief(coord));
    }
    double[] vec = new double[v.size()];
    for (int i = 0; i < vec.length; i++) {
      JsonNode c = v.get(i);
      if (!c.isNumber() || !Double.isFinite(c.doubleValue())) {
        return Parsed.bad("coordinate_malformed", "Coord.Vec[" + i + "] is " + brief(c));
      }
      vec[i] = c.doubleValue();
    }
    String[] names = {"Error", "Adjustment", "Height"};
    double[] values = new double[3];
    for (int i = 0; i < names.length; i++) {
      JsonNode n = coord.path(names[i]);
      if (!n.isNumber() || !Double.isFinite(n.doubleValue())) {
        return Parsed.bad("coordinate_malformed", "Coord." + names[i] + " is " + brief(n));
      }
      values[i] = n.doubleValue();
    }
    if (values[2] < 0) { // Serf keeps every height at or above its minimum (10 us): a negative one is no reading
      return Parsed.bad("coordinate_malformed", "Coord.Height is " + brief(coord.path("Height")) + " (expected: >= 0)");
    }
    return new Parsed(new NetworkCoordinate(vec, values[0], values[1], values[2]), null, "");
  }

  int dimensions() {
    return vec.length;
  }

  double error() {
    return error;
  }

  /** True if both have vectors of the same length, the only case Serf computes a distance for. */
  boolean compatibleWith(NetworkCoordinate other) {
    return vec.length == other.vec.length;
  }

  /**
   * The estimated round-trip time to {@code other} in seconds (Serf's {@code DistanceTo}, without its
   * truncation to whole nanoseconds).
   *
   * @throws IllegalArgumentException if the dimensions differ (Serf panics there)
   */
  double distanceSeconds(NetworkCoordinate other) {
    if (!compatibleWith(other)) {
      throw new IllegalArgumentException("dimensions: " + vec.length + " and " + other.vec.length
          + " (expected: equal)");
    }
    double sum = 0;
    for (int i = 0; i < vec.length; i++) {
      double d = vec[i] - other.vec[i];
      sum += d * d;
    }
    double raw = Math.sqrt(sum) + height + other.height;
    // A negative adjustment may pull the estimate below zero; Serf then keeps the raw distance.
    double adjusted = raw + adjustment + other.adjustment;
    return adjusted > 0 ? adjusted : raw;
  }

  private static String brief(JsonNode n) {
    String s = n.isMissingNode() ? "missing" : n.toString();
    return s.length() > 80 ? s.substring(0, 80) + "..." : s;
  }

  @Override
  public String toString() {
    return "Coord{vec=" + Arrays.toString(vec) + ", error=" + error + ", adjustment=" + adjustment
        + ", height=" + height + "}";
  }
}
