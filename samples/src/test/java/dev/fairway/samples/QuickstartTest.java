package dev.fairway.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class QuickstartTest {
  @Test
  void tenCalls_rotateOverTheThreeBackends() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<Integer> ports = Quickstart.run(new PrintStream(out, true, StandardCharsets.UTF_8));
    assertThat(ports).hasSize(10);
    assertThat(new HashSet<>(ports)).hasSize(3);
    Map<Integer, Long> perPort = ports.stream().collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
    assertThat(perPort.values()).containsExactlyInAnyOrder(4L, 3L, 3L);
    // Round robin: the first three calls hit three different backends and then repeat in order.
    assertThat(ports.get(3)).isEqualTo(ports.get(0));
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(printed.lines()).hasSize(10);
    assertThat(printed).contains("call  1 -> 127.0.0.1:" + ports.get(0)).contains("hello from backend-");
  }
}
