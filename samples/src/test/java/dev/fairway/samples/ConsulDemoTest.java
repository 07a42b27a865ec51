package dev.fairway.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
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
}
