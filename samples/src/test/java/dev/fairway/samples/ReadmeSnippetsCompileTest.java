package dev.fairway.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Every {@code ```java} block of the root README compiles as written against the project's modules
 * (and Spring's, for the "Spring Boot" section), so the quickstart and the other snippets cannot
 * drift from the API. Each block is a method body; a class in a block is a local class.
 */
class ReadmeSnippetsCompileTest {
  private static final String IMPORTS = String.join("\n",
      "import com.sun.net.httpserver.HttpServer;",
      "import dev.fairway.lb.*;",
      "import dev.fairway.lb.consul.*;",
      "import dev.fairway.lb.dns.*;",
      "import dev.fairway.lb.kubernetes.*;",
      "import dev.fairway.lb.okhttp.*;",
      "import io.micrometer.core.instrument.simple.SimpleMeterRegistry;",
      "import java.io.IOException;",
      "import java.net.InetSocketAddress;",
      "import java.net.Socket;",
      "import java.nio.charset.StandardCharsets;",
      "import java.time.Duration;",
      "import java.util.concurrent.TimeUnit;",
      "import okhttp3.OkHttpClient;",
      "import okhttp3.Request;",
      "import okhttp3.Response;",
      "import org.springframework.cloud.client.loadbalancer.LoadBalanced;",
      "import org.springframework.context.annotation.Bean;",
      "import org.springframework.context.annotation.Configuration;",
      "import org.springframework.stereotype.Service;",
      "import org.springframework.web.client.RestClient;",
      "");

  static List<String> javaBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(markdown);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }

  @Test
  void everyJavaBlockInTheReadmeCompiles() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"));
    List<String> blocks = javaBlocks(readme);
    assertThat(blocks).as("java blocks in README.md").hasSizeGreaterThanOrEqualTo(3);
    List<JavaFileObject> sources = new ArrayList<>();
    for (int i = 0; i < blocks.size(); i++) {
      String name = "ReadmeSnippet" + i;
      String code = IMPORTS + "class " + name + " {\n static void run() throws Exception {\n" + blocks.get(i) + "\n }\n}\n";
      sources.add(new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
          return code;
        }
      });
    }
    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path out = Files.createTempDirectory("readme-snippets");
    StringWriter diagnostics = new StringWriter();
    boolean ok = compiler.getTask(diagnostics, null, null,
        List.of("-classpath", classpath, "-d", out.toString(), "-proc:none"), null, sources).call();
    assertThat(ok).as("README snippets compile:%n%s", diagnostics).isTrue();
  }

  @Test
  void blockExtraction_findsFencedJavaOnly() {
    String md = "text\n```java\nint a = 1;\n```\n```sh\nls\n```\n```java\nint b = 2;\n```\n";
    assertThat(javaBlocks(md)).containsExactly("int a = 1;\n", "int b = 2;\n");
  }
}
