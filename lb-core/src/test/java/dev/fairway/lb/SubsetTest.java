package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ConnectException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Deterministic subsetting: the window arithmetic alone, then through real balancers. */
class SubsetTest {

  // ------------------------------------------------------------ the window function

  @Test
  void window_threePeersSevenTargetsWindowThree_exactCoverage_andEveryTargetCarriesTwoTargetsWorth() {
    SubsetWindow w0 = SubsetWindow.of(7, 3, new PeerPosition(0, 3));
    SubsetWindow w1 = SubsetWindow.of(7, 3, new PeerPosition(1, 3));
    SubsetWindow w2 = SubsetWindow.of(7, 3, new PeerPosition(2, 3));
    // n = ceil(3 x 3 / 7) = 2 laps; arcs of 14 of the ring's 21 units, starting at 0, 7 and 14
    assertThat(w0.laps).isEqualTo(2);
    assertThat(w0.units).isEqualTo(3);
    assertThat(w0.byRank()).containsExactly(3, 3, 3, 3, 2, 0, 0);
    assertThat(w1.byRank()).containsExactly(0, 0, 2, 3, 3, 3, 3);
    assertThat(w2.byRank()).containsExactly(3, 3, 1, 0, 1, 3, 3);
    assertThat(new int[] {w0.first, w0.ranks, w1.first, w1.ranks, w2.first, w2.ranks})
        .containsExactly(0, 5, 2, 5, 4, 6);
    for (int r = 0; r < 7; r++) {
      assertThat(w0.byRank()[r] + w1.byRank()[r] + w2.byRank()[r]).as("rank %d", r).isEqualTo(2 * 3);
    }
  }

  @Test
  void window_everyTargetsTotalCoverageIsEqual_forManyShapes() {
    int[][] shapes = {{1, 1, 1}, {3, 7, 3}, {7, 3, 1}, {10, 2, 1}, {300, 300, 10}, {300, 300, 90}, {1000, 5000, 12},
        {13, 29, 5}, {29, 13, 5}, {40, 20, 5}, {5, 100, 100}, {100, 7, 7}, {64, 1000, 3}};
    for (int[] shape : shapes) {
      int peers = shape[0];
      int targets = shape[1];
      int window = shape[2];
      long[] total = new long[targets];
      int laps = 0;
      for (int i = 0; i < peers; i++) {
        SubsetWindow w = SubsetWindow.of(targets, window, new PeerPosition(i, peers));
        laps = w.laps;
        int held = 0;
        int[] byRank = w.byRank();
        for (int r = 0; r < targets; r++) {
          total[r] += byRank[r];
          held += byRank[r] > 0 ? 1 : 0;
        }
        assertThat(held).as("%s peer %d holds at least the window", List.of(peers, targets, window), i)
            .isGreaterThanOrEqualTo(window).isEqualTo(w.ranks);
      }
      for (int r = 0; r < targets; r++) {
        assertThat(total[r]).as("%s rank %d", List.of(peers, targets, window), r).isEqualTo((long) laps * peers);
      }
    }
  }

  @Test
  void ringOrder_isByHashOfTheId_whateverTheDiscoveryOrder() {
    String[] ids = {"a:1", "b:1", "c:1", "d:1", "e:1"};
    String[] shuffled = {"d:1", "a:1", "e:1", "c:1", "b:1"};
    int[] one = SubsetWindow.ringOrder(ids);
    int[] two = SubsetWindow.ringOrder(shuffled);
    List<String> first = new ArrayList<>();
    List<String> second = new ArrayList<>();
    for (int r = 0; r < ids.length; r++) {
      first.add(ids[one[r]]);
      second.add(shuffled[two[r]]);
      if (r > 0) {
        assertThat(Murmur3.hash64(ids[one[r]])).isGreaterThan(Murmur3.hash64(ids[one[r - 1]]));
      }
    }
    assertThat(second).isEqualTo(first);
  }

  // ------------------------------------------------------------ through a balancer

  static final List<Target> SEVEN = Fixtures.targets(7);

  /** The targets in ring order. */
  static List<Target> ring(List<Target> targets) {
    String[] ids = targets.stream().map(Target::id).toArray(String[]::new);
    List<Target> out = new ArrayList<>();
    for (int i : SubsetWindow.ringOrder(ids)) {
      out.add(targets.get(i));
    }
    return out;
  }

  static Map<Target, Double> shares(LoadBalancer lb) {
    Map<Target, Double> out = new HashMap<>();
    for (TargetStatus s : lb.status()) {
      if (s.subsetShare() > 0) {
        out.put(s.target(), s.subsetShare());
      }
    }
    return out;
  }

  LoadBalancer balancer(Subset subset, TargetSource source, Strategy strategy) {
    return Fixtures.builder(new Fixtures.FakeTicker(), 7).targets(source).strategy(strategy).subset(subset).build();
  }

  @Test
  void balancer_runsOverItsWindowWithTheEdgeAsWeight() throws Exception {
    List<Target> ring = ring(SEVEN);
    try (LoadBalancer lb = balancer(Subset.of(3, PeerCoordinate.fixed(0, 3)).withFloor(1), TargetSource.of(SEVEN),
        Strategy.weightedRoundRobin())) {
      assertThat(shares(lb)).isEqualTo(Map.of(ring.get(0), 1.0, ring.get(1), 1.0, ring.get(2), 1.0, ring.get(3), 1.0,
          ring.get(4), 2 / 3.0));
      assertThat(lb.status()).hasSize(7); // status still shows every target
      // weights 3, 3, 3, 3, 2 in thirds: 14 picks are one exact cycle
      Map<String, Integer> c = counts(sequence(lb, 14 * 10));
      assertThat(c).containsOnlyKeys(Fixtures.name(ring.get(0)), Fixtures.name(ring.get(1)),
          Fixtures.name(ring.get(2)), Fixtures.name(ring.get(3)), Fixtures.name(ring.get(4)));
      assertThat(c.get(Fixtures.name(ring.get(0)))).isEqualTo(30);
      assertThat(c.get(Fixtures.name(ring.get(4)))).isEqualTo(20);
    }
  }

  @Test
  void balancers_ofAllPeers_coverEveryTargetEqually_andPicksSpreadEvenly() throws Exception {
    Map<Target, Integer> picks = new HashMap<>();
    Map<Target, Double> coverage = new HashMap<>();
    for (int i = 0; i < 3; i++) {
      try (LoadBalancer lb = balancer(Subset.of(3, PeerCoordinate.fixed(i, 3)).withFloor(1), TargetSource.of(SEVEN),
          Strategy.weightedRoundRobin())) {
        shares(lb).forEach((target, share) -> coverage.merge(target, share, Double::sum));
        for (int k = 0; k < 14 * 100; k++) {
          Pick p = lb.pick();
          picks.merge(p.target(), 1, Integer::sum);
          p.success();
        }
      }
    }
    assertThat(coverage).hasSize(7);
    coverage.values().forEach(v -> assertThat(v).isCloseTo(2.0, org.assertj.core.data.Offset.offset(1e-9)));
    assertThat(picks).hasSize(7);
    picks.values().forEach(v -> assertThat(v).isEqualTo(600)); // 4200 picks, 7 targets, exact cycles
  }

  @Test
  void shares_isWhatTheBalancerHolds_forEveryPeer() throws Exception {
    List<Target> forty = Fixtures.targets(40);
    Subset subset = Subset.of(5, PeerCoordinate.fixed(0, 1)).withFloor(1);
    for (int i = 0; i < 13; i++) {
      try (LoadBalancer lb = balancer(Subset.of(5, PeerCoordinate.fixed(i, 13)).withFloor(1),
          TargetSource.of(forty), Strategy.roundRobin())) {
        assertThat(subset.shares(forty, new PeerPosition(i, 13))).isEqualTo(shares(lb));
      }
    }
    assertThat(subset.shares(List.of(), new PeerPosition(0, 1))).isEmpty();
    assertThatThrownBy(() -> subset.shares(List.of(t(1), t(1)), new PeerPosition(0, 1)))
        .hasMessage("targets: \"10.0.0.1:8080\" (expected: unique ids)");
  }

  @Test
  void ejectionInsideTheWindow_widensItPastItsEnd_andTheEjectedOneGetsNothing() throws Exception {
    List<Target> ring = ring(SEVEN);
    try (LoadBalancer lb = balancer(Subset.of(3, PeerCoordinate.fixed(0, 3)).withFloor(1), TargetSource.of(SEVEN),
        Strategy.roundRobin())) {
      Target inside = ring.get(1);
      Set<Target> others = new HashSet<>(SEVEN);
      others.remove(inside);
      Pick p = lb.pick(null, others);
      assertThat(p.target()).isEqualTo(inside);
      p.failure(new ConnectException("Connection refused"));
      assertThat(Fixtures.state(lb, inside)).isEqualTo(TargetState.EJECTED);
      // 5 covered, 1 out: the next target on the ring joins, whole, so 5 stay in service
      assertThat(shares(lb)).isEqualTo(Map.of(ring.get(0), 1.0, inside, 1.0, ring.get(2), 1.0, ring.get(3), 1.0,
          ring.get(4), 2 / 3.0, ring.get(5), 1.0));
      assertThat(counts(sequence(lb, 50)).keySet()).containsExactlyInAnyOrder(Fixtures.name(ring.get(0)),
          Fixtures.name(ring.get(2)), Fixtures.name(ring.get(3)), Fixtures.name(ring.get(4)),
          Fixtures.name(ring.get(5)));
    }
  }

  @Test
  void unhealthyTargets_widenTheWindow_untilEveryTargetInServiceIsIn() throws Exception {
    List<Target> ring = ring(SEVEN);
    List<Target> list = new ArrayList<>();
    for (Target t : SEVEN) {
      boolean sick = t.equals(ring.get(0)) || t.equals(ring.get(2)) || t.equals(ring.get(3));
      list.add(sick ? t.withHealthy(false) : t);
    }
    try (LoadBalancer lb = Fixtures.builder(new Fixtures.FakeTicker(), 7).targets(TargetSource.of(list))
        .strategy(Strategy.roundRobin()).panicThreshold(0)
        .subset(Subset.of(3, PeerCoordinate.fixed(0, 3)).withFloor(1)).build()) {
      // 5 covered, 3 of them out: ranks 5 and 6 join, and then no target in service is left out
      assertThat(shares(lb)).hasSize(7);
      assertThat(counts(sequence(lb, 40)).keySet()).containsExactlyInAnyOrder(Fixtures.name(ring.get(1)),
          Fixtures.name(ring.get(4)), Fixtures.name(ring.get(5)), Fixtures.name(ring.get(6)));
    }
  }

  @Test
  void panicMode_picksAcrossTheUnwidenedWindow() throws Exception {
    List<Target> ring = ring(SEVEN);
    List<Target> list = new ArrayList<>();
    for (Target t : SEVEN) {
      list.add(t.equals(ring.get(5)) || t.equals(ring.get(6)) ? t : t.withHealthy(false));
    }
    try (LoadBalancer lb = balancer(Subset.of(3, PeerCoordinate.fixed(0, 3)).withFloor(1), TargetSource.of(list),
        Strategy.roundRobin())) {
      assertThat(lb.published().panic).isTrue();
      assertThat(shares(lb).keySet()).containsExactlyInAnyOrder(ring.get(0), ring.get(1), ring.get(2), ring.get(3),
          ring.get(4));
      assertThat(counts(sequence(lb, 50))).hasSize(5);
    }
  }

  @Test
  void theFloor_widensASmallWindow_andIsCappedAtTheTargetCount() throws Exception {
    try (LoadBalancer lb = balancer(Subset.of(3, PeerCoordinate.fixed(1, 3)), TargetSource.of(SEVEN),
        Strategy.roundRobin())) {
      assertThat(shares(lb)).hasSize(7).allSatisfy((t, share) -> assertThat(share).isEqualTo(1.0));
    }
    List<Target> twenty = Fixtures.targets(20);
    try (LoadBalancer lb = balancer(Subset.of(3, PeerCoordinate.fixed(1, 3)), TargetSource.of(twenty),
        Strategy.roundRobin())) {
      // window max(3, 12) = 12: n = ceil(12 x 3 / 20) = 2 laps of 20 x 2 / 3 = 13.3 targets, from 6.67
      assertThat(shares(lb)).hasSize(14);
      assertThat(shares(lb).values().stream().mapToDouble(Double::doubleValue).sum())
          .isCloseTo(40 / 3.0, org.assertj.core.data.Offset.offset(1e-9));
    }
  }

  /** A coordinate whose position the test sets. */
  static final class LiveCoordinate implements PeerCoordinate {
    private volatile Optional<PeerPosition> current;
    private final List<Consumer<Optional<PeerPosition>>> listeners = new CopyOnWriteArrayList<>();

    LiveCoordinate(Optional<PeerPosition> initial) {
      this.current = initial;
    }

    void set(Optional<PeerPosition> next) {
      current = next;
      listeners.forEach(l -> l.accept(next));
    }

    @Override
    public Optional<PeerPosition> current() {
      return current;
    }

    @Override
    public AutoCloseable subscribe(Consumer<Optional<PeerPosition>> listener) {
      listeners.add(listener);
      listener.accept(current);
      return () -> listeners.remove(listener);
    }
  }

  @Test
  void aLiveCoordinate_movesTheWindow_andAnEmptyOneMeansEveryTarget() throws Exception {
    List<Target> ring = ring(SEVEN);
    LiveCoordinate coordinate = new LiveCoordinate(Optional.empty());
    try (LoadBalancer lb = balancer(Subset.of(3, coordinate).withFloor(1), TargetSource.of(SEVEN),
        Strategy.roundRobin())) {
      assertThat(shares(lb)).hasSize(7).allSatisfy((t, share) -> assertThat(share).isEqualTo(1.0));
      assertThat(counts(sequence(lb, 70))).hasSize(7);

      coordinate.set(Optional.of(new PeerPosition(1, 3)));
      assertThat(shares(lb)).isEqualTo(Map.of(ring.get(2), 2 / 3.0, ring.get(3), 1.0, ring.get(4), 1.0,
          ring.get(5), 1.0, ring.get(6), 1.0));
      assertThat(counts(sequence(lb, 50))).hasSize(5).doesNotContainKeys(Fixtures.name(ring.get(0)),
          Fixtures.name(ring.get(1)));

      coordinate.set(Optional.of(new PeerPosition(0, 2))); // a peer left: n = ceil(3 x 2 / 7) = 1, 3.5 targets
      assertThat(shares(lb)).isEqualTo(Map.of(ring.get(0), 1.0, ring.get(1), 1.0, ring.get(2), 1.0,
          ring.get(3), 0.5));

      coordinate.set(Optional.empty());
      assertThat(shares(lb)).hasSize(7);
    }
    assertThat(coordinate.listeners).isEmpty(); // close() unsubscribed
  }

  @Test
  void membershipChange_keepsTheRingOrder_andMovesTheWindowLittle() throws Exception {
    MutableTargetSource source = new MutableTargetSource(Fixtures.targets(30));
    try (LoadBalancer lb = balancer(Subset.of(5, PeerCoordinate.fixed(2, 6)).withFloor(1), source,
        Strategy.roundRobin())) {
      Set<Target> before = shares(lb).keySet();
      source.add(t(31));
      Set<Target> after = shares(lb).keySet();
      Set<Target> changed = new HashSet<>(before);
      changed.addAll(after);
      Set<Target> kept = new HashSet<>(before);
      kept.retainAll(after);
      changed.removeAll(kept);
      assertThat(changed.size()).isLessThanOrEqualTo(2);
    }
  }

  @Test
  void withoutASubset_everyTargetHasAShareOfOne_andTheSnapshotIsTheWholeList() throws Exception {
    try (LoadBalancer lb = Fixtures.builder(new Fixtures.FakeTicker(), 7).targets(TargetSource.of(SEVEN)).build()) {
      assertThat(lb.status()).hasSize(7).allSatisfy(s -> assertThat(s.subsetShare()).isEqualTo(1.0));
      assertThat(lb.snapshot().members).isSameAs(lb.snapshot().known);
      assertThat(lb.snapshot().knownShare).isNull();
    }
  }

  @Test
  void invalidConfiguration_failsNamingTheFieldAndTheValue() {
    assertThatThrownBy(() -> Subset.of(0, PeerCoordinate.fixed(0, 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("size: 0 (expected: 1..1000000)");
    assertThatThrownBy(() -> Subset.of(3, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("coordinate: null (expected: a PeerCoordinate, e.g. PeerCoordinate.fixed(index, count))");
    assertThatThrownBy(() -> Subset.of(3, PeerCoordinate.fixed(0, 1)).withFloor(-2))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("floor: -2 (expected: 1..1000000)");
    assertThatThrownBy(() -> LoadBalancer.builder("svc").subset(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("subset: null (expected: Subset.of(size, coordinate))");
    Subset s = Subset.of(3, PeerCoordinate.fixed(0, 1));
    assertThatThrownBy(() -> LoadBalancer.builder("svc").subset(s).subset(s))
        .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("subset was already set to Subset{size=3");
  }
}
