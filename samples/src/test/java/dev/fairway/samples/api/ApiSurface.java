package dev.fairway.samples.api;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The public API of one package as sorted text: every type a caller outside the package can name,
 * each followed by its public and protected constructors, methods and fields. One line per type or
 * member, in the JDK's own {@code toGenericString} form (fully qualified, generics included), so a
 * diff of two listings reads as "this signature went, that one came".
 *
 * <p>Reads the compiled classes (a {@code target/classes} directory or a jar, whichever the test
 * classpath holds) through reflection, without initialising them. Subpackages are not included:
 * {@code dev.fairway.lb.internal} is documented as not API.
 */
final class ApiSurface {
  private ApiSurface() {}

  /** The listing of {@code anchor}'s package, read from wherever {@code anchor} was loaded from. */
  static List<String> of(Class<?> anchor) {
    String pkg = anchor.getPackageName();
    List<String> out = new ArrayList<>();
    classNames(anchor).stream()
        .map(name -> load(name, anchor.getClassLoader()))
        .filter(ApiSurface::visibleOutsideThePackage)
        .sorted(Comparator.comparing(Class::getName))
        .forEach(type -> {
          if (!type.getPackageName().equals(pkg)) {
            throw new IllegalStateException(type + " is not in " + pkg);
          }
          out.add(header(type));
          out.addAll(members(type));
        });
    return out;
  }

  private static List<String> members(Class<?> type) {
    TreeSet<String> lines = new TreeSet<>();
    for (Constructor<?> c : type.getDeclaredConstructors()) {
      if (isApi(c)) {
        lines.add("  " + c.toGenericString());
      }
    }
    // A public method inherited from a non-public superclass is callable on the public type: list it.
    for (Class<?> c = type; c != null && (c == type || !Modifier.isPublic(c.getModifiers())); c = c.getSuperclass()) {
      for (Method m : c.getDeclaredMethods()) {
        if (isApi(m) && !m.isBridge()) {
          lines.add("  " + m.toGenericString());
        }
      }
      for (Field f : c.getDeclaredFields()) {
        if (isApi(f)) {
          lines.add("  " + f.toGenericString());
        }
      }
    }
    return new ArrayList<>(lines);
  }

  private static boolean isApi(Member m) {
    int mod = m.getModifiers();
    return !m.isSynthetic() && (Modifier.isPublic(mod) || Modifier.isProtected(mod));
  }

  static String header(Class<?> type) {
    int mod = type.getModifiers() & (Modifier.PUBLIC | Modifier.PROTECTED | Modifier.STATIC | Modifier.FINAL | Modifier.ABSTRACT);
    String kind;
    if (type.isAnnotation()) {
      kind = "@interface";
      mod &= ~Modifier.ABSTRACT;
    } else if (type.isInterface()) {
      kind = "interface";
      mod &= ~Modifier.ABSTRACT;
    } else if (type.isEnum()) {
      kind = "enum";
      mod &= ~(Modifier.FINAL | Modifier.ABSTRACT);
    } else if (type.isRecord()) {
      kind = "record";
      mod &= ~Modifier.FINAL;
    } else {
      kind = "class";
    }
    StringBuilder b = new StringBuilder(Modifier.toString(mod));
    if (type.isSealed()) {
      b.append(" sealed");
    }
    b.append(' ').append(kind).append(' ').append(type.getName()).append(typeParameters(type.getTypeParameters()));
    Type sup = type.getGenericSuperclass();
    if (sup != null && sup != Object.class && !type.isEnum() && !type.isRecord()) {
      b.append(" extends ").append(sup.getTypeName());
    }
    Type[] interfaces = type.getGenericInterfaces();
    if (interfaces.length > 0) {
      b.append(type.isInterface() ? " extends " : " implements ")
          .append(Arrays.stream(interfaces).map(Type::getTypeName).collect(Collectors.joining(", ")));
    }
    if (type.isSealed()) {
      b.append(" permits ").append(Arrays.stream(type.getPermittedSubclasses()).map(Class::getName).sorted()
          .collect(Collectors.joining(", ")));
    }
    return b.toString();
  }

  private static String typeParameters(TypeVariable<?>[] vars) {
    if (vars.length == 0) {
      return "";
    }
    return Arrays.stream(vars).map(v -> {
      List<String> bounds = Arrays.stream(v.getBounds()).filter(t -> t != Object.class).map(Type::getTypeName).toList();
      return bounds.isEmpty() ? v.getName() : v.getName() + " extends " + String.join(" & ", bounds);
    }).collect(Collectors.joining(", ", "<", ">"));
  }

  /** Public, and (for a nested type) public or protected inside a type that is itself visible. */
  private static boolean visibleOutsideThePackage(Class<?> type) {
    if (type.isSynthetic() || type.isAnonymousClass() || type.isLocalClass()) {
      return false;
    }
    int mod = type.getModifiers();
    if (type.getEnclosingClass() == null) {
      return Modifier.isPublic(mod);
    }
    return (Modifier.isPublic(mod) || Modifier.isProtected(mod)) && visibleOutsideThePackage(type.getEnclosingClass());
  }

  private static Class<?> load(String name, ClassLoader loader) {
    try {
      return Class.forName(name, false, loader);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(name + " is listed next to its package's classes but does not load", e);
    }
  }

  /** Binary names of every class file directly in {@code anchor}'s package (not its subpackages). */
  private static List<String> classNames(Class<?> anchor) {
    String dir = anchor.getPackageName().replace('.', '/') + "/";
    Path root;
    try {
      root = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    try {
      List<String> entries;
      if (Files.isDirectory(root)) {
        try (Stream<Path> files = Files.list(root.resolve(dir))) {
          entries = files.map(p -> dir + p.getFileName()).toList();
        }
      } else {
        try (JarFile jar = new JarFile(root.toFile())) {
          entries = jar.stream().map(e -> e.getName())
              .filter(n -> n.startsWith(dir) && n.indexOf('/', dir.length()) < 0).toList();
        }
      }
      return entries.stream()
          .filter(n -> n.endsWith(".class") && !n.endsWith("package-info.class") && !n.endsWith("module-info.class"))
          .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.'))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The lines only in {@code expected} ("- ") and only in {@code actual} ("+ "), in listing order.
   * Every line names its type in full, so no line stands for two members and a set difference is
   * the whole diff.
   */
  static List<String> diff(List<String> expected, List<String> actual) {
    TreeSet<String> inExpected = new TreeSet<>(expected);
    TreeSet<String> inActual = new TreeSet<>(actual);
    List<String> out = new ArrayList<>();
    for (String line : expected) {
      if (!inActual.contains(line)) {
        out.add("- " + line);
      }
    }
    for (String line : actual) {
      if (!inExpected.contains(line)) {
        out.add("+ " + line);
      }
    }
    return out;
  }
}
