package dev.fairway.lb;

import static dev.fairway.lb.internal.Args.requireArgument;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Deterministic subsetting ({@link LoadBalancer.Builder#subset}): each client balances over its own
 * window of the targets rather than all of them, so C clients over S targets open about
 * {@code C x size} connections instead of {@code C x S}, and every target still gets the same share.
 *
 * <p>How (Finagle's deterministic aperture): every client orders the targets the same way, by a
 * stable hash of {@link Target#id()} (not by discovery order), onto a ring where each target owns
 * an equal slice. The client at {@link PeerPosition} {@code (index, count)} takes the arc that starts
 * at {@code index / count} of the way round and is {@code n / count} of the ring wide, with {@code n =
 * ceil(window x count / S)} (the smallest whole number of peer slices that covers {@code window}
 * targets), so the arcs of all peers cover the ring exactly {@code n} times. A target the arc
 * covers in part is in the window with that fraction of its weight; the strategy then runs over the
 * window with those weights. So:
 * <ul>
 *   <li>every target carries the same total weight across all peers ({@code n} targets' worth);
 *   <li>a window holds at least {@code window} targets, more when {@code count} does not divide
 *       evenly (at most about {@code window + S / count + 1});
 *   <li>when targets or peers come and go the arcs move by a fraction of a slice, so each client's
 *       window changes by a target or two, not wholesale.
 * </ul>
 * Here {@code window = min(S, max(size, floor))}.
 *
 * <p>Health: an ejected or unhealthy target inside the window is made up for by widening the window
 * past its end, one target at a time, so the window never has fewer targets in service than it
 * covers (nor than {@code window}), as long as that many are in service at all. In panic mode
 * (fewer than the {@linkplain LoadBalancer.Builder#panicThreshold panic threshold} of all targets in
 * service) picks go to every target of the window as computed without widening, healthy or not.
 * Zone-aware routing ({@link LoadBalancer.Builder#localZone}) then works inside the window: the
 * window is taken over all targets whatever their zone. {@link ActiveHealth} probes the targets of
 * the window (widened included), not every target: the client connects to those alone.
 *
 * <p>When the coordinate has no position (say, this client is not registered), or has one while
 * there are no targets, the balancer runs over every target, as without a subset. The window is
 * computed when the snapshot is rebuilt (a change of targets, health or position); a pick costs
 * what it costs without a subset, over the smaller window.
 *
 * <p>Immutable (but for a memo of {@link #shares}) and thread-safe.
 *
 * <pre>{@code
 * LoadBalancer lb = LoadBalancer.builder("orders")
 *     .targets(source)
 *     .subset(Subset.of(20, PeerCoordinate.fixed(podIndex, podCount)))
 *     .build();
 * }</pre>
 */
public final class Subset {
  /** The default floor: Finagle's minimum deterministic aperture. */
  public static final int DEFAULT_FLOOR = 12;
  static final int MAX = 1_000_000;

  private final int size;
  private final int floor;
  private final PeerCoordinate coordinate;

  private Subset(int size, int floor, PeerCoordinate coordinate) {
    this.size = size;
    this.floor = floor;
    this.coordinate = coordinate;
  }

  /**
   * A window of at least {@code size} targets (and at least the floor, default {@value
   * #DEFAULT_FLOOR}; never more than there are targets) for the client at {@code coordinate}'s
   * position.
   *
   * @throws IllegalArgumentException naming the field and the value: {@code size} outside 1..1000000,
   *     {@code coordinate} null
   */
  public static Subset of(int size, PeerCoordinate coordinate) {
    requireArgument(size >= 1 && size <= MAX, "size", size, "1.." + MAX);
    requireArgument(coordinate != null, "coordinate", null, "a PeerCoordinate, e.g. PeerCoordinate.fixed(index, count)");
    return new Subset(size, DEFAULT_FLOOR, coordinate);
  }

  /**
   * This subset with another floor: the window covers at least {@code floor} targets (or all, when
   * there are fewer) whatever {@code size} says, so one or two ejections cannot leave a client with
   * almost nothing. Default {@value #DEFAULT_FLOOR}; {@code withFloor(1)} lets {@code size} alone
   * decide.
   *
   * @throws IllegalArgumentException naming the field and the value outside 1..1000000
   */
  public Subset withFloor(int floor) {
    requireArgument(floor >= 1 && floor <= MAX, "floor", floor, "1.." + MAX);
    return new Subset(size, floor, coordinate);
  }

  /** The requested window size. */
  public int size() {
    return size;
  }

  /** The least number of targets a window covers (capped by the number of targets). */
  public int floor() {
    return floor;
  }

  /** Where this client's position comes from. */
  public PeerCoordinate coordinate() {
    return coordinate;
  }

  /**
   * The window a client at {@code position} holds over {@code targets} when every one is in service,
   * by the arithmetic the balancer uses: each target of the window mapped to its share, 0..1 (1 for
   * a whole target, a fraction at the edges), in ring order. For planning and checks (the subsetting
   * lab measures churn with it); {@link #coordinate()} is not asked. Remembers the ring order of the
   * last list it was given (by identity), so asking for every position over one list sorts it once.
   *
   * @throws IllegalArgumentException naming the field when {@code targets} or {@code position} is
   *     null or a target repeats an id
   */
  public Map<Target, Double> shares(List<Target> targets, PeerPosition position) {
    requireArgument(targets != null, "targets", null, "a list of targets");
    requireArgument(position != null, "position", null, "a PeerPosition");
    Map<Target, Double> out = new LinkedHashMap<>();
    int n = targets.size();
    if (n == 0) {
      return out;
    }
    Order o = order;
    if (o == null || o.list != targets) {
      String[] ids = new String[n];
      Set<String> seen = new HashSet<>();
      for (int i = 0; i < n; i++) {
        Target t = targets.get(i);
        requireArgument(t != null, "targets", null, "no null target");
        requireArgument(seen.add(t.id()), "targets", t.id(), "unique ids");
        ids[i] = t.id();
      }
      o = new Order(targets, SubsetWindow.ringOrder(ids));
      order = o;
    }
    SubsetWindow w = SubsetWindow.of(n, windowSize(n), position);
    for (int k = 0; k < w.ranks; k++) {
      out.put(targets.get(o.order[w.rank(k)]), w.coverage[k] / (double) w.units);
    }
    return out;
  }

  /** A list (by identity) and its ring order; replaced whole. */
  private static final class Order {
    final List<Target> list;
    final int[] order;

    Order(List<Target> list, int[] order) {
      this.list = list;
      this.order = order;
    }
  }

  private transient volatile @Nullable Order order;

  /** The window size over {@code targets} targets: {@code min(targets, max(size, floor))}. */
  public int windowSize(int targets) {
    return Math.min(targets, Math.max(size, floor));
  }

  @Override
  public String toString() {
    return "Subset{size=" + size + ", floor=" + floor + ", " + coordinate + "}";
  }
}
