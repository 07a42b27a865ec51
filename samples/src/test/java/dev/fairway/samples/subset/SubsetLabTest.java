package dev.fairway.samples.subset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A small subsetting lab run: the table's shape and the invariants deterministic subsetting promises. */
class SubsetLabTest {

  @Test
  void smallFleet_deterministicIsEven_randomIsNot_andChurnStaysInItsBounds() throws Exception {
    SubsetLab.Options o = SubsetLab.parse(new String[] {"--set", "30x30x6", "--requests-per-target", "20"});
    SubsetLab.Result r = SubsetLab.run(o.sets().get(0), o);

    // 30 x 6 / 30 = 6 laps: every client holds 6 whole instances and every instance 6 clients.
    assertThat(r.deterministic().connectionsPerClient()).isEqualTo(6.0);
    assertThat(r.deterministic().connections().maxOverMean()).isLessThanOrEqualTo(1.05);
    assertThat(r.deterministic().connections().minOverMean()).isGreaterThanOrEqualTo(0.95);
    assertThat(r.deterministic().uniform().maxOverMean()).isLessThanOrEqualTo(1.10);
    // random subsetting over the same fleet is measurably uneven (seeded, so exact each run)
    assertThat(r.random().connections().maxOverMean()).isGreaterThan(1.2);
    assertThat(r.random().connections().cv()).isGreaterThan(r.deterministic().connections().cv());

    assertThat(r.deterministic().churn().keySet()).containsExactlyElementsOf(SubsetLab.EVENTS);
    assertThat(r.random().churn().keySet()).containsExactlyElementsOf(SubsetLab.EVENTS);
    assertThat(r.deterministic().churn().get("S+1").maxPerClient()).isLessThanOrEqualTo(2);
    assertThat(r.deterministic().churn().get("C+1").maxPerClient()).isLessThanOrEqualTo(2 * 1 + 2);
    assertThat(r.random().churn().get("C+1").total()).isZero(); // rendezvous does not look at the peer count
    assertThat(r.restartStepsMeasured()).isEqualTo(30);

    String[] lines = r.table().split("\n");
    assertThat(lines[0]).startsWith("subset lab: 30 clients x 30 instances, window 6 (floor 6), strategy weighted-round-robin");
    assertThat(lines[1]).contains("deterministic").contains("random (A68)");
    assertThat(r.table()).contains("connections per instance: max/mean").contains("requests per instance, skewed load: CV")
        .contains("  S+1 ").contains("  S-1 ").contains("  S+10% ").contains("  C+1 (the 30 existing clients)")
        .contains("  rolling restart (30 of 30 steps)").contains("targets: S+1 <= 2 pairs per client: met");
    assertThat(lines).hasSize(19);
  }

  @Test
  void theWindowsUnevenEdges_stillGiveEveryInstanceTheSameRequests() throws Exception {
    // 7 x 3 / 10 = 2.1 -> 3 laps: windows of 30/7 = 4.3 instances with fractional edges
    SubsetLab.Options o = SubsetLab.parse(new String[] {"--set", "7x10x3", "--requests-per-target", "300"});
    SubsetLab.Result r = SubsetLab.run(o.sets().get(0), o);
    assertThat(r.deterministic().connectionsPerClient()).isGreaterThan(4.0);
    assertThat(r.deterministic().uniform().maxOverMean()).isLessThanOrEqualTo(1.05);
    assertThat(r.deterministic().uniform().minOverMean()).isGreaterThanOrEqualTo(0.95);
  }

  @Test
  void options_defaultToTheIssuesThreeSets_andRejectNonsense() {
    assertThat(SubsetLab.parse(new String[0]).sets()).containsExactly(new SubsetLab.Params(300, 300, 10),
        new SubsetLab.Params(300, 300, 90), new SubsetLab.Params(1000, 5000, 12));
    assertThat(SubsetLab.parse(new String[] {"--set", "3x7x3", "--floor", "1"}).floor()).isEqualTo(1);
    assertThatThrownBy(() -> SubsetLab.parse(new String[] {"--set", "3x7"}))
        .hasMessage("--set: 3x7 (expected: CxSxK, e.g. 300x300x90)");
    assertThatThrownBy(() -> SubsetLab.parse(new String[] {"--set", "3x7x9"}))
        .hasMessage("--set: 3x7x9 (expected: C >= 1, S >= 2, 1 <= K <= S)");
    assertThatThrownBy(() -> SubsetLab.parse(new String[] {"--bogus", "1"})).hasMessage("unknown option: --bogus");
    assertThat(SubsetLab.HELP).contains("--set CxSxK").contains("--restart-steps");
    assertThat(List.of(SubsetLab.HELP.split("\n"))).first().isEqualTo("usage: java -jar fairway-samples.jar subset-lab [options]");
  }
}
