class Point { constructor() { this.x = 1; this.y = 2; } } console.log(new Point(), [new Point()]); console.log(Point, function named() {}, () => {})
