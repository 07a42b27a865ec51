package dev.fairway.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class SpringBootSampleTest {
  @Test
  void twelveCalls_allAnswered_noneByTheStoppedInstanceAfterItStopped() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    SpringBootSample.Outcome outcome = SpringBootSample.run(new PrintStream(out, true, StandardCharsets.UTF_8));
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(outcome.failures()).as(printed).isZero();
    assertThat(outcome.stopped()).isEqualTo("orders-2");
    List<String> answers = outcome.answers();
    assertThat(answers).hasSize(2 * SpringBootSample.CALLS_PER_PHASE);
    assertThat(answers).allMatch(a -> a.matches("orders-[123]: 3 open orders"), "an answer from an orders instance");
    assertThat(answers.subList(SpringBootSample.CALLS_PER_PHASE, answers.size()))
        .noneMatch(a -> a.startsWith("orders-2:"));
    // Every response carries the starter's load report (the server side), in the TEXT form Fairway reads.
    assertThat(outcome.loadReports()).hasSize(answers.size())
        .allMatch(r -> r.matches("TEXT application_utilization=[0-9.]+, named_metrics\\.rif=\\d+, named_metrics\\.workers=8"),
            "a load report from a server with 8 workers");
    assertThat(printed).contains("orders-2 stopped").contains("GET http://orders/orders -> orders-");
  }
}
