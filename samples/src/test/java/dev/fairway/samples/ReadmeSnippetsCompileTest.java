package dev.fairway.samples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Every {@code ```java} block of the project's documents compiles as written against the project's
 * modules (and Spring's, for the Spring Boot snippets), so the quickstart and the other snippets
 * cannot drift from the API: the root README, each module's README and every page under
 * {@code docs/}. Each block is a method body; a class in a block is a local class. Each snippet is
 * written once: two documents that show the same code link to one of them instead.
 */
class ReadmeSnippetsCompileTest {
  private static final String IMPORTS = String.join("\n",
      "import com.sun.net.httpserver.HttpServer;",
      "import dev.fairway.lb.*;",
      // lb-core's policy, not lb-okhttp's deprecated one of the same name (both wildcards hold one)
      "import dev.fairway.lb.HedgingPolicy;",
      "import dev.fairway.lb.consul.*;",
      "import dev.fairway.lb.consul.fake.*;",
      "import dev.fairway.lb.dns.*;",
      "import dev.fairway.lb.jdk.*;",
      "import dev.fairway.lb.hc5.FairwayHttpClient5;",
      "import dev.fairway.lb.kubernetes.*;",
      "import dev.fairway.lb.okhttp.*;",
      "import dev.fairway.lb.spring.FairwayHttpClient5Path;",
      "import io.micrometer.core.instrument.simple.SimpleMeterRegistry;",
      "import java.io.IOException;",
      "import java.net.InetSocketAddress;",
      "import java.net.URI;",
      "import java.net.http.HttpClient;",
      "import java.net.http.HttpRequest;",
      "import java.net.http.HttpResponse;",
      "import java.net.Socket;",
      "import java.nio.charset.StandardCharsets;",
      "import java.time.Duration;",
      "import java.util.concurrent.TimeUnit;",
      "import okhttp3.OkHttpClient;",
      "import okhttp3.Request;",
      "import okhttp3.Response;",
      "import org.apache.hc.client5.http.classic.methods.HttpGet;",
      "import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;",
      "import org.apache.hc.client5.http.impl.async.HttpAsyncClients;",
      "import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;",
      "import org.apache.hc.client5.http.impl.classic.HttpClients;",
      "import org.apache.hc.core5.http.io.entity.EntityUtils;",
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

  /** The repository's root, seen from this module's directory (where surefire runs). */
  private static final Path ROOT = Path.of("..");

  /** README.md, every module's README.md and every page under docs/, in a stable order. */
  static List<Path> documents() throws IOException {
    List<Path> docs = new ArrayList<>();
    docs.add(ROOT.resolve("README.md"));
    try (Stream<Path> modules = Files.list(ROOT)) {
      modules.map(dir -> dir.resolve("README.md")).filter(Files::isRegularFile).sorted().forEach(docs::add);
    }
    try (Stream<Path> pages = Files.walk(ROOT.resolve("docs"))) {
      pages.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
    }
    return docs;
  }

  /** Each document's java blocks, by the document's path relative to the root. */
  static Map<String, List<String>> blocksByDocument() throws IOException {
    Map<String, List<String>> blocks = new java.util.LinkedHashMap<>();
    for (Path doc : documents()) {
      blocks.put(ROOT.relativize(doc).toString(), javaBlocks(Files.readString(doc)));
    }
    return blocks;
  }

  @Test
  void documents_includeTheRootReadme_theModuleReadmes_andTheDocsPages() throws IOException {
    assertThat(documents().stream().map(d -> ROOT.relativize(d).toString().replace('\\', '/')))
        .contains("README.md", "lb-core/README.md", "lb-okhttp/README.md", "lb-jdk-httpclient/README.md",
            "lb-apache-httpclient5/README.md",
            "lb-discovery-consul/README.md",
            "lb-spring-boot/README.md", "samples/README.md", "docs/hedging.md", "docs/discovery.md");
  }

  @Test
  void everyJavaBlockInTheDocumentsCompiles() throws IOException {
    Map<String, List<String>> byDocument = blocksByDocument();
    assertThat(byDocument.get("README.md")).as("java blocks in README.md").hasSizeGreaterThanOrEqualTo(3);
    List<JavaFileObject> sources = new ArrayList<>();
    Map<String, String> origin = new java.util.LinkedHashMap<>();
    for (Map.Entry<String, List<String>> doc : byDocument.entrySet()) {
      List<String> blocks = doc.getValue();
      for (int i = 0; i < blocks.size(); i++) {
        String name = "Snippet" + sources.size();
        origin.put(name, doc.getKey() + ", java block " + (i + 1));
        String code = IMPORTS + "class " + name + " {\n static void run() throws Exception {\n" + blocks.get(i) + "\n }\n}\n";
        sources.add(new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
          @Override
          public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return code;
          }
        });
      }
    }
    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path out = Files.createTempDirectory("readme-snippets");
    StringWriter diagnostics = new StringWriter();
    boolean ok = compiler.getTask(diagnostics, null, null,
        List.of("-classpath", classpath, "-d", out.toString(), "-proc:none"), null, sources).call();
    assertThat(ok).as("document snippets compile (SnippetN: %s):%n%s", origin, diagnostics).isTrue();
  }

  @Test
  void eachJavaSnippetIsWrittenOnce() throws IOException {
    Map<String, List<String>> seen = new HashMap<>();
    blocksByDocument().forEach((doc, blocks) -> blocks.forEach(
        block -> seen.computeIfAbsent(block.replaceAll("\\s+", " ").trim(), k -> new ArrayList<>()).add(doc)));
    Map<String, List<String>> repeated = seen.entrySet().stream().filter(e -> e.getValue().size() > 1)
        .collect(Collectors.toMap(e -> e.getKey().substring(0, Math.min(80, e.getKey().length())), Map.Entry::getValue));
    assertThat(repeated).as("java blocks that appear more than once (first 80 characters -> documents)").isEmpty();
  }

  @Test
  void blockExtraction_findsFencedJavaOnly() {
    String md = "text\n```java\nint a = 1;\n```\n```sh\nls\n```\n```java\nint b = 2;\n```\n";
    assertThat(javaBlocks(md)).containsExactly("int a = 1;\n", "int b = 2;\n");
  }
}
