package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The {@code subset} scenario on a small fleet (8 clients x 4 backends, window 2, 40 calls each, one
 * user per client): the servers' own accept counts with and without a subset. Counts, not times, so
 * nothing depends on the machine's load.
 */
class SubsetScenarioTest {
  private static final int CLIENTS = 8;
  private static final int BACKENDS = 4;
  private static final int CALLS = 40;

  @Test
  void subset_cutsTheConnectionsEachServerAccepts_toTheClientsWhoseWindowReachesIt() throws Exception {
    LabOptions options = LabOptions.builder().scenarios("subset").timeScale(0.05).build();
    SubsetSocketLab.Result r = new SubsetSocketLab(options, CLIENTS, BACKENDS, 2, CALLS)
        .run(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));

    assertThat(r.all().errors()).as(r.all().firstError()).isZero();
    assertThat(r.subset().errors()).as(r.subset().firstError()).isZero();
    // Without a subset: every client on every backend, one kept-alive connection each.
    assertThat(r.all().connections()).containsOnly(CLIENTS);
    assertThat(r.all().windowTargets()).containsOnly(BACKENDS);
    // With one: a peer slice is 1/8 of the ring, a target 2/8, a window 4/8: an even client's window is
    // two whole targets, an odd one's a whole target and two halves.
    assertThat(r.subset().windowTargets()).containsExactly(2, 3, 2, 3, 2, 3, 2, 3);
    assertThat(r.subset().totalConnections()).as("one accepted socket per target in a window")
        .isEqualTo(Arrays.stream(r.subset().windowTargets()).sum());
    assertThat(r.subset().connections()).as("each backend: 4 whole-target windows and 2 halves reach it")
        .containsOnly(5);
    assertThat(r.all().totalCalls()).isEqualTo(CLIENTS * CALLS);
    assertThat(r.subset().totalCalls()).isEqualTo(CLIENTS * CALLS);
    assertThat(SubsetSocketLab.maxOverMean(SubsetSocketLab.doubles(r.subset().calls()))).as("calls per backend, max/mean")
        .isLessThanOrEqualTo(1.10);
    assertThat(SubsetSocketLab.minOverMean(SubsetSocketLab.doubles(r.subset().calls()))).as("calls per backend, min/mean")
        .isGreaterThanOrEqualTo(0.90);

    String table = SubsetSocketLab.table(r, options);
    assertThat(table).contains("subset: 8 clients x 4 backends on loopback")
        .contains(String.format("%-11s %12d %12d %12d %12d", "total", 32, 20, 320, 320))
        .contains(String.format("%-11s %12.3f %12.3f", "max/mean", 1.0, 1.0))
        .contains("targets in each client's window: all 4..4 (mean 4.00), subset 2..3 (mean 2.50)")
        .contains("errors: all 0, subset 0");
  }

  @Test
  void subset_runsOnlyWhenNamed_andOnlyThroughOkHttp() {
    assertThat(Scenario.defaultRun()).doesNotContain(Scenario.SUBSET);
    assertThat(LabOptions.builder().scenarios("subset").build().scenarios()).containsExactly(Scenario.SUBSET);
    assertThatThrownBy(() -> LabOptions.builder().scenarios("subset").client(LabClient.Kind.SPRING).build())
        .hasMessageStartingWith("--scenario: \"subset\" (expected: with --client okhttp only");
    assertThat(SubsetSocketLab.strategyOf(LabOptions.builder().build())).isEqualTo("weighted-round-robin");
    assertThat(SubsetSocketLab.strategyOf(LabOptions.builder().strategies("round-robin").build())).isEqualTo("round-robin");
  }
}
