package dev.fairway.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ConsulDemoTest {
  @Test
  void withoutAnAgent_explainsHowToStartOne() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int code = ConsulDemo.run("127.0.0.1:" + port, null, new PrintStream(out, true, StandardCharsets.UTF_8));
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(code).isEqualTo(1);
    assertThat(printed)
        .contains("needs a running Consul agent")
        .contains("http://127.0.0.1:" + port)
        .contains("consul agent -dev");
  }

  @Test
  void address_acceptsHostPortAsConsulDoes() {
    assertThat(ConsulDemo.normalize(null)).isEqualTo("http://127.0.0.1:8500");
    assertThat(ConsulDemo.normalize("10.0.0.5:8500")).isEqualTo("http://10.0.0.5:8500");
    assertThat(ConsulDemo.normalize("https://consul.example:8501/")).isEqualTo("https://consul.example:8501");
  }

  @Test
  void withAnAgent_balancesOverWhatConsulReportsAndDropsTheDeregisteredInstance() throws Exception {
    try (FakeConsul consul = FakeConsul.start()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ConsulDemo.Registry registry = new ConsulDemo.Registry() {
        @Override
        public void register(String id, int port) {
          consul.register(ConsulDemo.SERVICE, Instance.of(id, "127.0.0.1", port));
        }

        @Override
        public void deregister(String id) {
          consul.deregister(ConsulDemo.SERVICE, id);
        }
      };
      int code = ConsulDemo.demo(consul.url(), null, registry, new PrintStream(out, true, StandardCharsets.UTF_8));
      String printed = out.toString(StandardCharsets.UTF_8);
      assertThat(code).as(printed).isZero();
      String[] halves = printed.split("deregistered ");
      assertThat(halves).hasSize(2);
      Set<String> before = servers(halves[0]);
      Set<String> after = servers(halves[1]);
      assertThat(before).containsExactlyInAnyOrder("instance-1", "instance-2", "instance-3");
      assertThat(after).containsExactlyInAnyOrder("instance-2", "instance-3");
      assertThat(halves[1]).startsWith(ConsulDemo.SERVICE + "-1;");
    }
  }

  private static Set<String> servers(String text) {
    Set<String> seen = new HashSet<>();
    Matcher m = Pattern.compile("hello from (instance-\\d)").matcher(text);
    while (m.find()) {
      seen.add(m.group(1));
    }
    return seen;
  }
}
