package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code liar} scenario and the honest report styles: what goes on the wire, exactly, and a
 * tiny lab run's structure. Asserts no throughput, share or latency: those are measurements.
 */
class LiarScenarioTest {
  private static final String HEADER = Backend.LOAD_REPORT_HEADER;

  private final OkHttpClient client = new OkHttpClient.Builder().callTimeout(Duration.ofSeconds(10)).build();
  private final List<Backend> backends = new ArrayList<>();

  @AfterEach
  void stop() {
    backends.forEach(Backend::close);
    client.dispatcher().executorService().shutdownNow();
    client.connectionPool().evictAll();
  }

  private Backend start(int index, long serviceMillis, int workers, LoadReportStyle style) throws IOException {
    Backend b = new Backend(index, TimeUnit.MILLISECONDS.toNanos(serviceMillis), workers).start();
    backends.add(b);
    b.reportStyle(style);
    return b;
  }

  private String reportOf(Backend b) throws IOException {
    Request request = new Request.Builder().url("http://127.0.0.1:" + b.port() + "/work").build();
    try (Response r = client.newCall(request).execute()) {
      assertThat(r.code()).isEqualTo(200);
      return r.header(HEADER);
    }
  }

  @Test
  void liarScenario_makesOnlyBackendFourLie_withOrWithoutLoadReports() {
    LabOptions reporting = LabOptions.parse("--scenario", "liar", "--load-reports");
    LabOptions silent = LabOptions.parse("--scenario", "liar");
    for (int i = 0; i < 4; i++) {
      LoadReportStyle expected = i == 3 ? LoadReportStyle.LIAR : LoadReportStyle.HONEST;
      assertThat(LoadReportStyle.of(reporting, Scenario.LIAR, i)).as("backend-%d with --load-reports", i + 1)
          .isSameAs(expected);
      assertThat(LoadReportStyle.of(silent, Scenario.LIAR, i)).as("backend-%d without", i + 1)
          .isSameAs(i == 3 ? LoadReportStyle.LIAR : null);
      assertThat(LoadReportStyle.of(reporting, Scenario.STEADY, i)).isSameAs(LoadReportStyle.HONEST);
    }
    assertThat(Scenario.defaultRun()).doesNotContain(Scenario.LIAR);
    assertThat(Scenario.of("liar")).isSameAs(Scenario.LIAR);
  }

  @Test
  void liar_sendsTheIdleLieOnTheWire_whateverItsLoad() throws Exception {
    // One worker of 200 ms and three calls at once: two of them queue, and the report still says idle.
    Backend liar = start(4, 200, 1, LoadReportStyle.LIAR);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<String>> reports = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        reports.add(pool.submit(() -> reportOf(liar)));
      }
      for (Future<String> report : reports) {
        assertThat(report.get(10, TimeUnit.SECONDS))
            .isEqualTo("TEXT application_utilization=0.000001, named_metrics.rif=1");
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(liar.received()).isEqualTo(3); // counted before the answer (served() only after it is written)
  }

  @Test
  void honestStyles_onTheWire_forOneCallAtAnIdleBackend() throws IOException {
    assertThat(reportOf(start(1, 1, 8, LoadReportStyle.HONEST)))
        .isEqualTo("TEXT application_utilization=0.0, named_metrics.rif=0, named_metrics.workers=8");
    assertThat(reportOf(start(2, 1, 8, LoadReportStyle.parse("rif-counts-answered"))))
        .isEqualTo("TEXT application_utilization=0.125, named_metrics.rif=1, named_metrics.workers=8");
    assertThat(reportOf(start(3, 1, 8, LoadReportStyle.parse("no-workers"))))
        .isEqualTo("TEXT application_utilization=0.0, named_metrics.rif=0");
    assertThat(reportOf(start(4, 1, 4, LoadReportStyle.parse("capped, rif-counts-answered, no-workers"))))
        .isEqualTo("TEXT application_utilization=0.25, named_metrics.rif=1");
    assertThat(reportOf(start(5, 1, 8, null))).isNull();
  }

  @Test
  void report_capsUtilizationAtOneLikeACpuFigure_onlyWhenAsked() {
    // 21 requests at 8 workers: 20 besides the one being answered, 2.5 busy per worker.
    assertThat(LoadReportStyle.HONEST.report(21, 8))
        .isEqualTo("TEXT application_utilization=2.5, named_metrics.rif=20, named_metrics.workers=8")
        .isEqualTo(Backend.loadReport(20, 8));
    assertThat(LoadReportStyle.parse("capped").report(21, 8))
        .isEqualTo("TEXT application_utilization=1.0, named_metrics.rif=20, named_metrics.workers=8");
    assertThat(LoadReportStyle.parse("capped,rif-counts-answered").report(21, 8))
        .isEqualTo("TEXT application_utilization=1.0, named_metrics.rif=21, named_metrics.workers=8");
    assertThat(LoadReportStyle.parse("capped").report(4, 8))
        .isEqualTo("TEXT application_utilization=0.375, named_metrics.rif=3, named_metrics.workers=8");
    assertThat(LoadReportStyle.LIAR.report(21, 8)).isEqualTo(LoadReportStyle.LIAR_REPORT);
    assertThat(LoadReportStyle.parse("uncapped,rif-excludes-answered,workers").toString())
        .isEqualTo(LoadReportStyle.HONEST.toString())
        .isEqualTo("uncapped,rif-excludes-answered,workers");
  }

  @Test
  void reportStyle_rejectsUnknownAndRepeatedWords() {
    String expected = " (expected: a comma-separated list of uncapped|capped, rif-excludes-answered|rif-counts-answered,"
        + " workers|no-workers, each at most once; or tomcat-200 alone)";
    assertThatThrownBy(() -> LabOptions.parse("--report-style", "capped,uncapped"))
        .isInstanceOf(LabOptions.UsageException.class).hasMessage("--report-style: \"capped,uncapped\"" + expected);
    assertThatThrownBy(() -> LabOptions.parse("--report-style", "cpu"))
        .isInstanceOf(LabOptions.UsageException.class).hasMessage("--report-style: \"cpu\"" + expected);
    assertThatThrownBy(() -> LabOptions.parse("--report-style", ""))
        .isInstanceOf(LabOptions.UsageException.class).hasMessage("--report-style: \"\"" + expected);
    assertThat(LabOptions.parse("--report-style", "no-workers,capped").reportStyle)
        .hasToString("capped,rif-excludes-answered,no-workers");
    assertThat(LabOptions.parse().reportStyle).isSameAs(LoadReportStyle.HONEST);
    // The starter's filter on Tomcat, which the reports scenario runs as a cell, for steady too.
    assertThat(LabOptions.parse("--report-style", "tomcat-200").reportStyle).isSameAs(LoadReportStyle.TOMCAT);
    assertThatThrownBy(() -> LabOptions.parse("--report-style", "tomcat-200,capped"))
        .isInstanceOf(LabOptions.UsageException.class).hasMessage("--report-style: \"tomcat-200,capped\"" + expected);
  }

  @Test
  void capacityShare_isWorkersOverServiceTime() {
    // 1/0.5 of 1/0.05 + 1/0.15 + 1/0.3 + 1/0.5 = 2 of 32.
    assertThat(LiarShare.capacityShare(new double[] {0.05, 0.15, 0.30, 0.50}, 3)).isCloseTo(0.0625, within(1e-12));
  }

  @Test
  void labRun_liar_tableNamesTheStyleAndEachStrategysLiarShare(@TempDir Path dir) throws Exception {
    LabOptions options = LabOptions.parse("--scenario", "liar", "--strategies", "least-queueing,least-connections",
        "--time-scale", "0.05", "--duration", "700ms", "--load-reports", "--report-style", "capped,no-workers",
        "--csv", dir.resolve("lab.csv").toString(), "--report", dir.resolve("lab.html").toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<RunResult> results = new Lab(options, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)).runAndReport();
    String stdout = out.toString(StandardCharsets.UTF_8);
    System.out.println(stdout);

    assertThat(results).extracting(RunResult::strategy).containsExactly("least-queueing", "least-connections");
    assertThat(stdout).contains("liar: " + Scenario.LIAR.shape() + " (N=100)")
        .contains(", load reports on (capped,rif-excludes-answered,no-workers)");
    for (RunResult r : results) {
      assertThat(r.scenario()).isSameAs(Scenario.LIAR);
      assertThat(stdout).contains(LiarShare.line(r, options));
    }
    List<String> csv = Files.readAllLines(dir.resolve("lab.csv"));
    assertThat(csv).hasSize(3);
    assertThat(csv.subList(1, 3)).allSatisfy(row -> assertThat(row).startsWith("liar,"));
  }
}
