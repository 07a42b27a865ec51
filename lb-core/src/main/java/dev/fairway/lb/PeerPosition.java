package dev.fairway.lb;

/**
 * This client's place among the peers that share a service's targets: {@code index} in {@code
 * [0, count)}. Deterministic subsetting gives each position its own window of the targets, so peers
 * that agree on their positions cover every target equally.
 *
 * @param index this client's index among its peers, {@code 0 <= index < count}
 * @param count how many peers there are, at least 1
 */
public record PeerPosition(int index, int count) {

  /** @throws IllegalArgumentException naming the field and the value when out of range */
  public PeerPosition {
    if (count < 1) {
      throw new IllegalArgumentException("count: " + count + " (expected: at least 1)");
    }
    if (index < 0 || index >= count) {
      throw new IllegalArgumentException("index: " + index + " (expected: 0.." + (count - 1) + ")");
    }
  }
}
