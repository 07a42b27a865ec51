package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code kubernetes} scenario at a tiny time scale: the rolling restart runs through the fake API
 * server and counts calls, and the zone-hints run keeps calls where the hints say. Asserts no error
 * counts of the rolling part (they depend on how fast a loaded machine schedules the changes), only
 * what must hold whatever the machine.
 */
class KubernetesScenarioTest {
  private static final double SCALE = 0.05;

  @Test
  void rollingRestart_throughEndpointConditions_runsAndCountsBothMethods() throws Exception {
    LabOptions options = LabOptions.builder().scenarios("kubernetes").timeScale(SCALE).build();
    RollingRun.Result r = new KubernetesRun(options, Duration.ofSeconds(2)).run();
    assertThat(r.getCalls()).isPositive();
    assertThat(r.postCalls()).isPositive();
    String table = KubernetesLab.table(new KubernetesLab.Results(List.of(r), List.of()), options);
    assertThat(table).contains("kubernetes: 20 users, GET and POST in turn").contains("2000 ms    longer");
  }

  @Test
  void zoneHints_keepEveryCallOnTheHintedEndpoints_andWithoutHintsOnTheLocalPod() throws Exception {
    LabOptions options = LabOptions.builder().scenarios("kubernetes").timeScale(SCALE).build();
    List<ZoneHintsRun.Result> results = new ZoneHintsRun(options).run();
    ZoneHintsRun.Result hints = results.get(0);
    assertThat(hints.setup()).isEqualTo("hints followed");
    assertThat(hints.calls()).isPositive();
    // Pods 1 and 4 are hinted for zone a; with every Pod healthy, zone routing keeps all calls there.
    assertThat(hints.perPod()[1] + hints.perPod()[2] + hints.perPod()[4] + hints.perPod()[5]).isZero();
    assertThat(hints.hintedShare()).isEqualTo(1.0);
    ZoneHintsRun.Result zoneOnly = results.get(1);
    assertThat(zoneOnly.perPod()[0]).isEqualTo(zoneOnly.calls()); // only Pod 1 is in zone a
    ByteArrayOutputStream progress = new ByteArrayOutputStream();
    try (PrintStream p = new PrintStream(progress, true, StandardCharsets.UTF_8)) {
      p.print(KubernetesLab.table(new KubernetesLab.Results(List.of(), results), options));
    }
    assertThat(progress.toString(StandardCharsets.UTF_8)).contains("hints followed").contains("100.0%");
  }
}
